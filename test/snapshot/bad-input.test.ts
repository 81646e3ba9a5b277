/** Every bad value is refused with exit 2, naming the flag, before the first request reaches the cluster. */

import { beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { BACKENDS } from "../cluster/testbed.ts";
import { ROOT } from "../e2e/_aicr.ts";
import { useCluster } from "../support/cluster.ts";
import { requestsSince } from "../support/requests.ts";
import { AGENT_IMAGE, runSnapshot, snapshotCluster, TEST_MS } from "./_harness.ts";

const FIX = join(ROOT, "test/fixtures");

const NS = "bad-input";

/** [what, extra args, a text the error must contain (the flag, usually)] */
const CASES: [string, string[], string][] = [
  ["node selector without '='", ["--node-selector", "gpu"], "--node-selector"],
  ["node selector with a bad key", ["--node-selector", "bad key=x"], "--node-selector"],
  ["node selector with a bad value", ["--node-selector", "k=has space"], "--node-selector"],
  ["toleration without an effect", ["--toleration", "key=value"], "--toleration"],
  ["toleration with an unknown effect", ["--toleration", "key:Never"], "--toleration"],
  ["timeout that is not a duration", ["--timeout", "5 minutes"], "--timeout"],
  ["timeout of zero", ["--timeout", "0s"], "--timeout"],
  ["timeout above the longest timer (596h)", ["--timeout", "600h"], "--timeout"],
  ["timeout without a unit", ["--timeout", "300"], "--timeout"],
  ["requests without a quantity", ["--requests", "cpu"], "--requests"],
  ["requests with a bad quantity", ["--requests", "cpu=lots"], "--requests"],
  ["limits with a bad unit", ["--limits", "memory=8XB"], "--limits"],
  ["a request above the limit given", ["--requests", "cpu=64", "--limits", "cpu=2"], "--limits cpu"],
  ["unknown OS family", ["--os", "windows"], "--os"],
  ["--require-gpu with --runtime-class", ["--require-gpu", "--runtime-class", "nvidia"], "--runtime-class"],
  ["cm:// in another namespace", ["-o", "cm://elsewhere/snap"], "--output"],
  ["cm:// with a bad name", ["-o", `cm://${NS}/Bad_Name`], "cm://"],
  ["cm:// with -t json", ["-o", `cm://${NS}/snap`, "-t", "json"], "--format"],
  ["bad --job-name prefix", ["--job-name", "Bad_Prefix"], "--job-name"],
  ["--job-name prefix ending in a dot", ["--job-name", "aicr."], "--job-name"],
  ["bad --service-account-name prefix", ["--service-account-name", "UPPER"], "--service-account-name"],
  ["bad --run-id", ["--run-id", "20261129-bad"], "--run-id"],
  ["bad AICR_RUN_ID", ["--run-id", "../etc"], "--run-id"],
  ["-t xml", ["-t", "xml"], "--format"],
  ["-t table with cm://", ["-o", `cm://${NS}/snap`, "-t", "table"], "--format"],
  [
    "--template with cm://",
    ["-o", `cm://${NS}/snap`, "--template", join(FIX, "templates/summary.tmpl")],
    "--template",
  ],
  [
    "--template with -t json",
    ["-t", "json", "--template", join(FIX, "templates/summary.tmpl")],
    "--template",
  ],
  ["a template that does not parse", ["--template", join(FIX, "templates/broken.tmpl")], "line 2"],
  [
    "--cluster-config in Job mode",
    ["--cluster-config", join(FIX, "providers/oke-addons.json")],
    "--cluster-config",
  ],
  ["--oke-addons a directory", ["--oke-addons", FIX], "--oke-addons"],
  ["--aks-gpu-pools missing", ["--aks-gpu-pools", join(FIX, "none.json")], "--aks-gpu-pools"],
  [
    "--gke-gpu-pools not a pool list",
    ["--gke-gpu-pools", join(FIX, "providers/oke-addons.json")],
    "--gke-gpu-pools",
  ],
  [
    "provider file with cm://",
    ["-o", `cm://${NS}/snap`, "--oke-addons", join(FIX, "providers/oke-addons.json")],
    "--oke-addons",
  ],
  ["negative --max-nodes-per-entry", ["--max-nodes-per-entry=-1"], "--max-nodes-per-entry"],
  ["non-numeric --max-nodes-per-entry", ["--max-nodes-per-entry", "many"], "--max-nodes-per-entry"],
  ["bad --image-pull-secret", ["--image-pull-secret", "Not A Secret"], "--image-pull-secret"],
  ["--image with a space", ["--image", "ghcr.io/x y"], "--image"],
  ["--privileged with a non-boolean", ["--privileged=maybe"], "--privileged"],
  ["--require-gpu with a non-boolean", ["--require-gpu=sure"], "--require-gpu"],
  ["--no-cleanup with a non-boolean", ["--no-cleanup=perhaps"], "cleanup"],
  ["an unknown flag", ["--bogus"], "--bogus"],
  ["bad namespace", ["-n", "Not_A_Namespace"], "Not_A_Namespace"],
  // argv itself (issue 14): one strict reading before citty's
  ["-n with no value", ["-n"], "flag -n needs a value"],
  ["-n followed by another flag", ["-n", "--debug"], "flag -n needs a value"],
  ["-o with no value", ["-o"], "flag -o needs a value"],
  ["a stray word", ["extra-word"], 'unexpected argument "extra-word" for "aicr snapshot"'],
  ["a negative --timeout", ["--timeout", "-1m"], 'invalid --timeout "-1m"'],
  [
    "a misspelt flag",
    ["--outptu", "snap.yaml"],
    'unknown flag "--outptu" for "aicr snapshot": did you mean "--output"?',
  ],
];

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: snapshotCluster });
    let admin: string;
    beforeAll(() => {
      admin = cluster().kubeconfigFor("admin");
    });

    for (const [what, args, names] of CASES) {
      test(
        `${what}: exit 2, the flag named, no request at all`,
        async () => {
          const before = cluster().log.entries.length;
          const r = await runSnapshot(admin, [
            ...(args.includes("-n") ? [] : ["-n", NS]),
            ...(args.includes("--image") ? [] : ["--image", AGENT_IMAGE]),
            ...args,
          ]);
          expect(r.code, r.stderr).toBe(2);
          expect(r.stderr).toContain("[INVALID_REQUEST]");
          expect(r.stderr).toContain(names);
          expect(r.stdout).toBe("");
          expect(requestsSince(cluster(), before)).toEqual([]);
        },
        TEST_MS,
      );
    }

    test(
      "bad values in the environment fallbacks are refused the same way",
      async () => {
        const before = cluster().log.entries.length;
        for (const [env, value] of [
          ["AICR_OS", "plan9"],
          ["AICR_REQUESTS", "cpu=="],
          ["AICR_REQUIRE_GPU", "perhaps"],
          ["AICR_RUN_ID", "not-a-run-id"],
        ] as const) {
          const r = await runSnapshot(admin, ["-n", NS, "--image", AGENT_IMAGE], { [env]: value });
          expect(r.code, `${env}=${value}\n${r.stderr}`).toBe(2);
        }
        expect(cluster().log.entries.length).toBe(before);
        // Nothing in this file ever reached the cluster with a write.
        expect(cluster().log.noMutatingRequest()).toBe(true);
      },
      TEST_MS,
    );

    test(
      "boolean flags read as the operator wrote them: --privileged=no is an unprivileged pod, not citty's true",
      async () => {
        const ns = "bool-flags";
        const r = await runSnapshot(admin, [
          "-n",
          ns,
          "--image",
          AGENT_IMAGE,
          "--privileged=no",
          "--no-cleanup",
        ]);
        expect(r.code, r.stderr).toBe(0);
        const job = cluster().log.entries.find(
          (e) => e.method === "POST" && e.path === `/apis/batch/v1/namespaces/${ns}/jobs`,
        );
        expect(JSON.stringify(job?.body)).not.toContain('"privileged":true');
        expect(JSON.stringify(job?.body)).toContain('"runAsNonRoot":true');
        expect(r.stderr).toContain("kept (--no-cleanup)");
      },
      TEST_MS,
    );
  });
