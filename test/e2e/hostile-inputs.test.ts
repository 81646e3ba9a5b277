/**
 * Issue 25's findings 2, 4 and 7 through the compiled binary: a careless or hostile input ends as
 * exit 2 with a message naming the flag and the file, nothing of a credential in any output, and no
 * request to the cluster (the fake apiserver's request log). Each case failed before its fix: a FIFO
 * hung (the test's own time limit), /dev/zero grew until killed, a parse error quoted the token.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { startTestCluster, type TestCluster } from "../cluster/testbed.ts";
import { requestsSince } from "../support/requests.ts";
import { AICR, aicr, baseEnv, ROOT } from "./_aicr.ts";

const TOKEN = "sk-live-0123456789abcdefSECRET";
const SNAPSHOT = join(ROOT, "test/fixtures/diff/baseline.yaml");
const RECIPE = join(ROOT, "examples/recipe.yaml");

let cluster: TestCluster;
let dir: string;
let kubeconfig: string;
let fifo: string;
let env: Record<string, string>;

beforeAll(async () => {
  cluster = await startTestCluster("fake");
  dir = mkdtempSync(join(tmpdir(), "aicr-hostile-"));
  kubeconfig = cluster.kubeconfigFor("admin");
  env = baseEnv({ KUBECONFIG: kubeconfig });
  fifo = join(dir, "fifo");
  spawnSync("mkfifo", [fifo]);
}, 60_000);
afterAll(async () => {
  await cluster.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs aicr, then checks the refusal: exit 2, nothing sent, the secret nowhere. */
async function refused(
  args: string[],
  says: string | RegExp,
  options: { env?: Record<string, string>; stdin?: string } = {},
) {
  const before = cluster.log.entries.length;
  const r = await aicr(args, {
    env: options.env ?? env,
    ...(options.stdin !== undefined ? { stdin: options.stdin } : {}),
  });
  expect(r.code, r.stderr).toBe(2);
  if (typeof says === "string") expect(r.stderr).toContain(says);
  else expect(r.stderr).toMatch(says);
  expect(`${r.stdout}${r.stderr}`).not.toContain(TOKEN);
  expect(requestsSince(cluster, before)).toEqual([]);
  return r;
}

describe("secrets never reach an error (finding 2)", () => {
  const broken = () => {
    const path = join(dir, "broken.kubeconfig");
    writeFileSync(
      path,
      [
        "apiVersion: v1",
        "kind: Config",
        "users:",
        "- name: u",
        "  user:",
        `    token: ${TOKEN}`,
        "clusters:",
        '- name: "c',
        "  cluster: {server: https://127.0.0.1:1}",
        "",
      ].join("\n"),
      { mode: 0o600 },
    );
    return path;
  };

  test("a malformed kubeconfig: line and column only, in text, --debug and --log-json", async () => {
    const path = broken();
    for (const extra of [[], ["--debug"], ["--log-json"]]) {
      const r = await refused(
        ["runs", "list", "-n", "default", ...extra],
        /kubeconfig \\?".*\\?": not valid YAML at line \d+, column \d+/,
        {
          env: baseEnv({ KUBECONFIG: path }),
        },
      );
      expect(r.stderr).not.toContain("token:");
    }
  });

  test("diff on a symlink to a credential-like file does not print its lines", async () => {
    const shadow = join(dir, "shadow");
    writeFileSync(shadow, `root:$6$${TOKEN}:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n`);
    const link = join(dir, "base.yaml");
    symlinkSync(shadow, link);
    const r = await refused(["diff", "-b", link, "--target", SNAPSHOT], "base.yaml");
    expect(r.stderr).not.toContain("root:");
    expect(r.stderr).not.toContain("$6$");
  });

  test("a user:password@ in a push destination is masked and refused", async () => {
    const r = await refused(
      ["image", "push", join(dir, "none.tar"), `me:${TOKEN}@registry.example.com/team/aicr:v1`],
      '"***@registry.example.com/team/aicr:v1"',
    );
    expect(r.stderr).toContain("--password-stdin");
  });
});

describe("every file the user names is bounded (finding 4)", () => {
  const sparse = () => {
    const path = join(dir, "huge.yaml");
    writeFileSync(path, "");
    truncateSync(path, 3 * 1024 ** 3);
    return path;
  };

  test("validate -r / -s: /dev/zero, a FIFO, a 3 GiB file", async () => {
    await refused(
      ["validate", "--no-cluster", "-r", "/dev/zero", "-s", SNAPSHOT],
      '--recipe "/dev/zero": a character device, not a regular file',
    );
    await refused(["validate", "--no-cluster", "-r", RECIPE, "-s", fifo], "a named pipe, not a regular file");
    await refused(
      ["validate", "--no-cluster", "-r", sparse(), "-s", SNAPSHOT],
      "3221225472 bytes, above the 1 MiB limit",
    );
  });

  test("diff -b / --target / --fleet baseline", async () => {
    await refused(["diff", "-b", fifo, "--target", SNAPSHOT], '--baseline "');
    await refused(["diff", "-b", SNAPSHOT, "--target", "/dev/zero"], "a character device");
  });

  test("the kubeconfig (KUBECONFIG and --kubeconfig) and a CA file it names", async () => {
    await refused(["runs", "list", "-n", "default"], 'kubeconfig "', { env: baseEnv({ KUBECONFIG: fifo }) });
    await refused(["runs", "list", "-n", "default", "--kubeconfig", "/dev/zero"], "a character device");
    const withCa = join(dir, "ca.kubeconfig");
    const doc = parseYaml(readFileSync(kubeconfig, "utf8"));
    doc.clusters[0].cluster["certificate-authority"] = "/dev/zero";
    writeFileSync(withCa, stringifyYaml(doc));
    await refused(["runs", "list", "-n", "default", "--kubeconfig", withCa], "certificate-authority");
    // client-node reads a token-file while it parses the kubeconfig: checked first
    for (const tokenFile of [fifo, "/dev/zero"]) {
      const withToken = join(dir, "token.kubeconfig");
      const doc = parseYaml(readFileSync(kubeconfig, "utf8"));
      doc.users[0].user = { "token-file": tokenFile };
      writeFileSync(withToken, stringifyYaml(doc));
      await refused(
        ["runs", "list", "-n", "default", "--kubeconfig", withToken],
        "the kubeconfig's token-file",
      );
    }
  });

  test("image push: the archive, --ca-file, --password-stdin", async () => {
    const dest = "127.0.0.1:1/team/aicr:v1";
    await refused(["image", "push", fifo, dest], 'archive "');
    await refused(["image", "push", SNAPSHOT, dest, "--ca-file", "/dev/zero"], '--ca-file "/dev/zero"');
    await refused(
      ["image", "push", SNAPSHOT, dest, "--username", "me", "--password-stdin"],
      "more than 64 KiB on standard input",
      { stdin: "p".repeat(100 * 1024) },
    );
    // a directory as stdin (`< dir`): refused, not a crash
    const before = cluster.log.entries.length;
    const proc = Bun.spawn(
      [
        "sh",
        "-c",
        'exec "$0" image push "$1" "$2" --username me --password-stdin < "$3"',
        AICR,
        SNAPSHOT,
        dest,
        dir,
      ],
      { env, stdout: "pipe", stderr: "pipe" },
    );
    expect(await proc.exited).toBe(2);
    expect(await new Response(proc.stderr).text()).toContain("standard input is a directory");
    expect(requestsSince(cluster, before)).toEqual([]);
  });

  test("snapshot --local: --cluster-config, --template, --config", async () => {
    await refused(["snapshot", "--local", "--cluster-config", fifo], '--cluster-config "');
    await refused(["snapshot", "--local", "--template", "/dev/zero"], '--template "/dev/zero"');
    await refused(["snapshot", "--config", fifo], '--config "');
  });

  test("invalid UTF-8 in a snapshot is refused with its offset, never replaced", async () => {
    const bad = join(dir, "latin1.yaml");
    writeFileSync(bad, Buffer.concat([readFileSync(SNAPSHOT), Buffer.from("# caf\xe9\n", "latin1")]));
    await refused(
      ["diff", "-b", bad, "--target", SNAPSHOT],
      /not UTF-8 text \(an invalid byte at offset \d+\)/,
    );
  });
});

describe("outputs never replace inputs or each other (finding 7)", () => {
  test("validate -o onto -s or -r, and -o and --junit on one file: refused, files unchanged", async () => {
    const s = join(dir, "s.yaml");
    const r = join(dir, "r.yaml");
    writeFileSync(s, readFileSync(SNAPSHOT));
    writeFileSync(r, readFileSync(RECIPE));
    await refused(
      ["validate", "--no-cluster", "-r", r, "-s", s, "-o", s],
      "is the same file as the input --snapshot",
    );
    await refused(
      ["validate", "--no-cluster", "-r", r, "-s", s, "--junit", r],
      "is the same file as the input --recipe",
    );
    const x = join(dir, "x.json");
    await refused(
      ["validate", "--no-cluster", "-r", r, "-s", s, "-o", x, "--junit", x],
      "is the same file as the output --output",
    );
    expect(readFileSync(s)).toEqual(readFileSync(SNAPSHOT));
    expect(readFileSync(r)).toEqual(readFileSync(RECIPE));
  });

  test("snapshot -o onto its --template (a symlink to it too)", async () => {
    const t = join(dir, "t.tmpl");
    writeFileSync(t, "{{ .kind }}\n");
    symlinkSync(t, join(dir, "t-link.tmpl"));
    await refused(
      ["snapshot", "--local", "--template", join(dir, "t-link.tmpl"), "-o", t],
      "the input --template",
    );
    expect(readFileSync(t, "utf8")).toBe("{{ .kind }}\n");
  });
});
