/**
 * aicr validate -r/-s https:// through the compiled binary, against a loopback HTTPS server with a
 * private CA (test/support/https-docs.ts): the same report as the files with --ca-file; verified TLS,
 * https only, the size cap, same-host redirects only, the air-gap wording and exit codes of a failed
 * fetch, query values masked everywhere — and nothing sent to the cluster when a fetch fails (the
 * fake cluster's request log: the fetch comes before the first cluster request).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useCluster } from "../support/cluster.ts";
import { type DocsServer, startDocsServer } from "../support/https-docs.ts";
import { requestsSince } from "../support/requests.ts";
import { until } from "../support/until.ts";
import { AICR, aicr, baseEnv, ensureBuilt, ROOT } from "./_aicr.ts";

const RECIPE = join(ROOT, "examples/recipe.yaml");
const SNAPSHOT = join(ROOT, "test/validate/fixtures/snapshot-h100.yaml");

let dir: string;
let docs: DocsServer;
/** A loopback port nobody listens on. */
let deadPort: number;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "aicr-validate-url-"));
  docs = startDocsServer(
    {
      "/recipe.yaml": readFileSync(RECIPE, "utf8"),
      "/snapshot.yaml": readFileSync(SNAPSHOT, "utf8"),
    },
    dir,
  );
  const gone = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  deadPort = gone.port as number;
  gone.stop(true);
  await ensureBuilt();
}, 60_000);
afterAll(() => {
  docs?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const validate = (args: string[], env: Record<string, string> = {}) =>
  aicr(["validate", "-t", "json", ...args], { env: baseEnv(env) });

/** The CTRF report without what differs from run to run (times, durations). */
function stable(stdout: string): unknown {
  const ctrf = JSON.parse(stdout);
  delete ctrf.timestamp;
  delete ctrf.results.summary.start;
  delete ctrf.results.summary.stop;
  delete ctrf.results.environment;
  for (const t of ctrf.results.tests) delete t.duration;
  return ctrf;
}

describe("aicr validate -r/-s https://", () => {
  test("a recipe and a snapshot over https with --ca-file give the files' report", async () => {
    const files = await validate(["-r", RECIPE, "-s", SNAPSHOT, "--no-cluster"]);
    expect(files.code, files.stderr).toBe(0);
    const urls = await validate([
      "-r",
      docs.url("/recipe.yaml"),
      "-s",
      docs.url("/snapshot.yaml"),
      "--ca-file",
      docs.caFile,
      "--no-cluster",
    ]);
    expect(urls.code, urls.stderr).toBe(0);
    expect(JSON.parse(files.stdout).results.summary).toMatchObject({ tests: 8, passed: 5, skipped: 3 });
    expect(stable(urls.stdout)).toEqual(stable(files.stdout));
    expect(urls.stderr).toContain(`evaluated against ${docs.url("/snapshot.yaml")}`);
  });

  test("a same-host redirect is followed", async () => {
    const r = await validate([
      "-r",
      docs.url("/redirect/same"),
      "-s",
      SNAPSHOT,
      "--ca-file",
      docs.caFile,
      "--no-cluster",
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).results.summary.tests).toBe(8);
  });

  test("a redirect to another host is refused naming both hosts (exit 2)", async () => {
    const r = await validate([
      "-r",
      docs.url("/redirect/localhost"),
      "-s",
      SNAPSHOT,
      "--ca-file",
      docs.caFile,
      "--no-cluster",
    ]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      `[INVALID_REQUEST] --recipe "${docs.url("/redirect/localhost")}": redirected from 127.0.0.1:${docs.port} to localhost:${docs.port}: aicr follows a redirect only within the same host`,
    );
    expect(r.stdout).toBe("");
  });

  test("a certificate of an untrusted CA is refused (exit 6), with or without NODE_TLS_REJECT_UNAUTHORIZED=0", async () => {
    const sent = docs.requests.length;
    for (const [extra, env] of [
      [[], {}],
      [[], { NODE_TLS_REJECT_UNAUTHORIZED: "0" }],
      [["--ca-file", docs.otherCaFile], {}],
    ] as [string[], Record<string, string>][]) {
      const r = await validate(
        ["-r", docs.url("/recipe.yaml"), "-s", SNAPSHOT, "--no-cluster", ...extra],
        env,
      );
      expect(r.code, r.stderr).toBe(6);
      expect(r.stderr).toContain(`the certificate of 127.0.0.1:${docs.port} is not trusted`);
      expect(r.stderr).toContain("pass --ca-file <pem> with the CA that issued it");
    }
    // the handshake failed: no request reached the server
    expect(docs.requests.length).toBe(sent);
  });

  test("http:// is refused before any request (exit 2), with the remedy", async () => {
    const url = `http://127.0.0.1:${docs.port}/recipe.yaml`;
    const r = await validate(["-r", url, "-s", SNAPSHOT, "--no-cluster"]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`[INVALID_REQUEST] --recipe "${url}": plain http:// is refused`);
    expect(r.stderr).toContain("serve it over https:// (--ca-file <pem> trusts a private CA)");
  });

  test("a document over the cap is refused (exit 2): announced, and streamed past it", async () => {
    const announced = await validate([
      "-r",
      RECIPE,
      "-s",
      docs.announced,
      "--ca-file",
      docs.caFile,
      "--no-cluster",
    ]);
    expect(announced.code, announced.stderr).toBe(2);
    expect(announced.stderr).toContain(
      "the server announces 10485760 bytes, above the 2 MiB limit of a snapshot",
    );
    const streamed = await validate([
      "-r",
      docs.url("/endless"),
      "-s",
      SNAPSHOT,
      "--ca-file",
      docs.caFile,
      "--no-cluster",
    ]);
    expect(streamed.code, streamed.stderr).toBe(2);
    expect(streamed.stderr).toContain("more than 1 MiB sent, above the 1 MiB limit of a recipe");
  });

  test("an unreachable host: exit 6, the URL, the cause and the download-and-pass-the-file remedy", async () => {
    const url = `https://127.0.0.1:${deadPort}/recipe.yaml`;
    const r = await validate(["-r", url, "-s", SNAPSHOT, "--no-cluster"]);
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toContain(
      `[SERVICE_UNAVAILABLE] --recipe "${url}": cannot fetch it from 127.0.0.1:${deadPort}:`,
    );
    expect(r.stderr).toContain(
      `on an air-gapped host, download it where the URL is reachable and pass the file, e.g. curl -fsSLo recipe.yaml '${url}' && aicr validate --recipe recipe.yaml`,
    );
    // the cause once: not repeated after the message as an error's cause would be
    expect(r.stderr.match(/ECONNREFUSED/g)?.length).toBe(1);
  });

  test("Ctrl-C during a stalled fetch ends it at once: exit 9", async () => {
    const sent = docs.requests.length;
    const proc = Bun.spawn(
      [AICR, "validate", "-r", docs.url("/stall"), "-s", SNAPSHOT, "--ca-file", docs.caFile, "--no-cluster"],
      { env: baseEnv(), stdout: "pipe", stderr: "pipe" },
    );
    await until(() => docs.requests.slice(sent).includes("/stall"), "the fetch of /stall", 10_000);
    proc.kill("SIGINT");
    const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
    expect(code, stderr).toBe(9);
    expect(stderr).toContain("[CANCELED] cancelled by SIGINT");
  });

  test("query values never reach stderr or the report: masked as ***, text and JSON logs alike", async () => {
    const secret = "s3cret-token-value";
    const recipe = docs.url(`/recipe.yaml?token=${secret}`);
    const snapshot = docs.url(`/snapshot.yaml?sig=${secret}`);
    for (const logJson of [[], ["--log-json"]]) {
      const ok = await validate([
        ...logJson,
        "-r",
        recipe,
        "-s",
        snapshot,
        "--ca-file",
        docs.caFile,
        "--no-cluster",
      ]);
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stderr).toContain(docs.url("/snapshot.yaml?sig=***"));
      const failed = await validate([
        ...logJson,
        "-r",
        docs.url(`/status/404?token=${secret}`),
        "-s",
        snapshot,
        "--ca-file",
        docs.caFile,
        "--no-cluster",
      ]);
      expect(failed.code, failed.stderr).toBe(3);
      expect(failed.stderr).toContain(docs.url("/status/404?token=***"));
      expect(failed.stderr).toContain("'<url>'");
      for (const r of [ok, failed]) expect(r.stdout + r.stderr).not.toContain(secret);
    }
  });
});

describe("a failed fetch sends nothing to the cluster", () => {
  const cluster = useCluster("fake");

  const run = async (args: string[]) => {
    const before = cluster().log.entries.length;
    const r = await aicr(["validate", "-t", "json", ...args], {
      env: baseEnv({ KUBECONFIG: cluster().kubeconfigFor("admin") }),
    });
    return { ...r, sent: requestsSince(cluster(), before) };
  };

  test("-r https:// unreachable with a live capture, -s https:// with -o cm:// and with -r cm://: exit 6, no request", async () => {
    const dead = `https://127.0.0.1:${deadPort}`;
    for (const args of [
      ["-r", `${dead}/recipe.yaml`],
      ["-r", RECIPE, "-s", `${dead}/snapshot.yaml`, "-o", "cm://aicr-validation/report"],
      ["-r", "cm://aicr-validation/recipe", "-s", `${dead}/snapshot.yaml`],
      ["-r", docs.url("/recipe.yaml"), "-s", "cm://aicr-validation/snapshot"],
    ]) {
      const r = await run(args);
      expect(r.code, r.stderr).toBe(6);
      expect(r.stderr).toContain("[SERVICE_UNAVAILABLE]");
      expect(r.sent).toEqual([]);
    }
  });

  test("with the fetch done, the cm:// read reaches the cluster (the log does record this run's requests)", async () => {
    const r = await run([
      "-r",
      docs.url("/recipe.yaml"),
      "--ca-file",
      docs.caFile,
      "-s",
      "cm://aicr-validation/snapshot",
    ]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain("ConfigMap snapshot not found in namespace aicr-validation");
    expect(r.sent).toContain("GET /api/v1/namespaces/aicr-validation/configmaps/snapshot");
  });
});
