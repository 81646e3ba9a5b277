/**
 * The `image push` command as an operator runs it (the compiled binary): the reference on stdout, the summary on stderr, the password from stdin and never
 * in the log, and the exit status of each refusal.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AICR, ensureBuilt } from "../e2e/_aicr.ts";
import { buildTestArchive } from "../registry/archive.ts";
import { writeArchive } from "../registry/helpers.ts";
import { type Registry, startRegistry } from "../registry/registry.ts";

const PASSWORD = "pw-grace-Secret-42";
let reg: Registry;
const archive = buildTestArchive({ tag: "v3", referrers: true });
/** The image's blobs and the referrers' (their empty config is one blob for all). */
const uploads = new Set([
  ...archive.blobs.keys(),
  ...archive.referrers.flatMap((a) => a.blobs.map((b) => b.digest)),
]).size;
/** The archive, each run's HOME and a DOCKER_CONFIG; removed with the suite. */
let work: string;
let tar: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "aicr-push-command-"));
  tar = writeArchive(archive, work);
  await ensureBuilt();
  reg = await startRegistry({ tls: true, htpasswd: { user: "grace", password: PASSWORD } });
}, 60_000);
afterAll(async () => {
  await reg?.stop();
  rmSync(work, { recursive: true, force: true });
}, 30_000);

async function run(args: string[], o: { stdin?: string; env?: Record<string, string> } = {}) {
  const proc = Bun.spawn([AICR, "image", "push", ...args], {
    stdin: new TextEncoder().encode(o.stdin ?? ""),
    stdout: "pipe",
    stderr: "pipe",
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: mkdtempSync(join(work, "home-")),
      NO_COLOR: "1",
      ...o.env,
    },
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { stdout, stderr, code };
}

describe("aicr image push", () => {
  test("prints <registry>/<repo>@<digest>; the summary and progress go to stderr; the password is never logged", async () => {
    const r = await run(
      [
        tar,
        `${reg.host}/cmd/aicr`,
        "--username",
        "grace",
        "--password-stdin",
        "--ca-file",
        reg.caFile,
        "--debug",
      ],
      {
        stdin: `${PASSWORD}\n`,
      },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${reg.host}/cmd/aicr@${archive.digest}\n`);
    expect(r.stderr).toContain(`Pushed ${reg.host}/cmd/aicr:v3: uploaded ${uploads} blobs`);
    expect(r.stderr).toContain("already present (0 B); 8 referrers (tag scheme)\n");
    expect(r.stderr).not.toContain(PASSWORD);
    expect(r.stderr).not.toContain(Buffer.from(`grace:${PASSWORD}`).toString("base64"));

    const again = await run(
      [tar, `${reg.host}/cmd/aicr`, "--username", "grace", "--password-stdin", "--ca-file", reg.caFile],
      {
        stdin: PASSWORD,
      },
    );
    expect(again.code).toBe(0);
    expect(again.stderr).toContain(`uploaded 0 blobs (0 B), mounted 0, skipped ${uploads} already present`);
    expect(again.stderr).toContain("; 8 referrers (tag scheme)\n");
  }, 60_000);

  test("credentials from $DOCKER_CONFIG", async () => {
    const dir = mkdtempSync(join(work, "docker-"));
    const auth = Buffer.from(`grace:${PASSWORD}`).toString("base64");
    writeFileSync(join(dir, "config.json"), JSON.stringify({ auths: { [reg.host]: { auth } } }));
    const r = await run([tar, `${reg.host}/cmd/config:v9`, "--ca-file", reg.caFile], {
      env: { DOCKER_CONFIG: dir },
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${reg.host}/cmd/config@${archive.digest}\n`);
  }, 60_000);

  test("exit statuses: 4 for a wrong password, 6 for an untrusted certificate or nobody listening, 2 for bad flags before any request", async () => {
    const wrong = await run(
      [tar, `${reg.host}/cmd/aicr`, "--username", "grace", "--password-stdin", "--ca-file", reg.caFile],
      {
        stdin: "nope\n",
      },
    );
    expect(wrong.code).toBe(4);
    expect(wrong.stderr).toContain("[UNAUTHORIZED]");
    expect(wrong.stdout).toBe("");

    const untrusted = await run([tar, `${reg.host}/cmd/aicr`, "--username", "grace", "--password-stdin"], {
      stdin: PASSWORD,
    });
    expect(untrusted.code).toBe(6);
    expect(untrusted.stderr).toContain("--ca-file");

    // NODE_TLS_REJECT_UNAUTHORIZED=0 (set in many CI jobs for other tools) changes nothing: the
    // handshake still fails, so the password never leaves. kubectl ignores that variable too.
    const envOff = await run([tar, `${reg.host}/cmd/aicr`, "--username", "grace", "--password-stdin"], {
      stdin: PASSWORD,
      env: { NODE_TLS_REJECT_UNAUTHORIZED: "0" },
    });
    expect(envOff.code).toBe(6);
    expect(envOff.stderr).toContain("--ca-file");

    // nobody listening (port 9, discard, is closed on loopback): exit 6 with the registry named
    const closed = await run([tar, "127.0.0.1:9/cmd/aicr", "--username", "grace", "--password-stdin"], {
      stdin: PASSWORD,
    });
    expect(closed.code).toBe(6);
    expect(closed.stderr).toContain("127.0.0.1:9");
    expect(closed.stderr).toContain("remedy:");

    // a closed port: exit 2 (not 6) proves the flags were refused before any connection
    const flags = await run([tar, "127.0.0.1:9/cmd/aicr", "--username", "grace"]);
    expect(flags.code).toBe(2);
    expect(flags.stderr).toContain("needs --password-stdin");
    const dest = await run([tar, "cmd/aicr:v1"]);
    expect(dest.code).toBe(2);
    expect(dest.stderr).toContain('Invalid push destination "cmd/aicr:v1"');
  }, 60_000);
});
