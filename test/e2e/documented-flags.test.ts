/**
 * Scripts written for the Go original keep working: every flag its operator guide and reference
 * document for snapshot, validate and diff is one the binary knows (its help lists it, so the strict
 * argv reader accepts it), and README's flag table for that command names it.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { aicr, ROOT } from "./_aicr.ts";

const DOCUMENTED: Record<string, string[]> = {
  snapshot: [
    "--output",
    "--format",
    "--config",
    "--kubeconfig",
    "--namespace",
    "--image",
    "--image-pull-secret",
    "--job-name",
    "--service-account-name",
    "--add-roles-to-service-account",
    "--node-selector",
    "--toleration",
    "--timeout",
    "--no-cleanup",
    "--privileged",
    "--require-gpu",
    "--runtime-class",
    "--template",
    "--max-nodes-per-entry",
    "--os",
    "--requests",
    "--limits",
    "--cluster-config",
    "--oke-addons",
    "--aks-gpu-pools",
    "--gke-gpu-pools",
    "--discover-network",
  ],
  validate: [
    "--recipe",
    "--snapshot",
    "--config",
    "--phase",
    "--skip-check",
    "--fail-on-error",
    "--fail-fast",
    "--output",
    "--kubeconfig",
    "--namespace",
    "--image",
    "--image-pull-secret",
    "--job-name",
    "--service-account-name",
    "--node-selector",
    "--toleration",
    "--timeout",
    "--no-cleanup",
    "--require-gpu",
    "--oke-addons",
    "--aks-gpu-pools",
    "--gke-gpu-pools",
    "--no-cluster",
  ],
  diff: ["--baseline", "--target", "--fail-on-drift", "--output", "--kubeconfig"],
};

/** The README section of a command: from its `### \`aicr <cmd>` heading to the next heading. */
function readmeSection(command: string): string {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.indexOf(`### \`aicr ${command}`);
  if (start < 0) return "";
  const next = readme.indexOf("\n#", start + 4);
  return readme.slice(start, next < 0 ? undefined : next);
}

const GLOBAL_IN_README = new Set(["--kubeconfig", "--namespace"]);

for (const [command, flags] of Object.entries(DOCUMENTED))
  describe(`aicr ${command}`, () => {
    test("every documented flag is in its help (so it parses)", async () => {
      const r = await aicr([command, "--help"]);
      expect(r.code, r.stderr).toBe(0);
      const missing = flags.filter((f) => !new RegExp(`${f}(?![a-z-])`).test(r.stdout));
      expect(missing).toEqual([]);
    });

    test("README's section for it names every documented flag", () => {
      const section = readmeSection(command);
      expect(section.length).toBeGreaterThan(0);
      // The global flags are described once, under "Commands".
      const missing = flags.filter(
        (f) => !GLOBAL_IN_README.has(f) && !new RegExp(`${f}(?![a-z-])`).test(section),
      );
      expect(missing).toEqual([]);
    });
  });
