/**
 * Scripts written for the Go original keep working: every flag its operator guide and reference
 * document for snapshot, validate and diff is one the binary knows (its help lists it, so the strict
 * argv reader accepts it), and README's flag table for that command names it. The other way round,
 * from the commands' own declarations (commands/_flag-spec.ts): every flag a command declares and
 * lists is in its help and in README's section for it.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { globalArgs } from "../../src/commands/_args.ts";
import type { AicrCommand } from "../../src/commands/_define.ts";
import cleanupLegacy from "../../src/commands/cleanup-legacy.ts";
import diff from "../../src/commands/diff.ts";
import renderRbac from "../../src/commands/render-rbac.ts";
import snapshot from "../../src/commands/snapshot.ts";
import validate from "../../src/commands/validate.ts";
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

/** Each command's own listed flags, from its declaration (the global ones are described once, under "Commands"). */
const DECLARED: Record<string, AicrCommand> = {
  snapshot,
  validate,
  diff,
  "render-rbac": renderRbac,
  "cleanup-legacy": cleanupLegacy,
};

for (const [command, cmd] of Object.entries(DECLARED))
  describe(`aicr ${command}: its declared flags`, () => {
    const flags = Object.entries(cmd.args)
      .filter(([name, spec]) => spec.type !== "positional" && !spec.hidden && !(name in globalArgs))
      .map(([name]) => `--${name}`);

    test("each is in its help", async () => {
      const r = await aicr([command, "--help"]);
      expect(r.code, r.stderr).toBe(0);
      expect(flags.filter((f) => !new RegExp(`${f}(?![a-z-])`).test(r.stdout))).toEqual([]);
    });

    test("README's section for it names each", () => {
      const section = readmeSection(command);
      expect(section.length).toBeGreaterThan(0);
      expect(flags.filter((f) => !new RegExp(`${f}(?![a-z-])`).test(section))).toEqual([]);
    });
  });
