/**
 * Module-boundary check, part of the test gate. Rules (ARCHITECTURE.md):
 *  1. imports point down the layer list only (same layer is fine, except command ↔ command);
 *  2. only src/kube/ imports @kubernetes/client-node;
 *  3. src/ never imports test/ or scripts/;
 *  4. pure builders import no I/O (fs, child_process, net, http, process-level modules);
 *  5. ARCHITECTURE.md's src/ tree names every file under src/, and only those (check-tree.ts);
 *  6. the import graph has no cycle (type-only and dynamic imports count: they couple modules too);
 *  7. a folder's public surface is its files without a leading "_" (Deno std's convention): a
 *     `_`-prefixed file is imported only from its own top-level folder;
 *  8. no test imports scripts/ (a script under test is run as a program; what both need lives in
 *     test/support, which the benchmarks import).
 */
import { readFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { checkTree, walk } from "./check-tree.ts";
import { findCycles } from "./import-cycles.ts";

const root = join(import.meta.dir, "..");
const src = join(root, "src");

/** Outermost first; a module may import from its own layer or any later one. */
const LAYERS: string[][] = [
  ["main.ts", "index.ts"],
  ["cli.ts"],
  ["commands"],
  ["remote", "deployer", "validate", "legacy", "runs", "image", "diff"],
  ["rbac", "collect", "snapshot", "run"],
  ["transport"],
  ["kube"],
  ["core"],
];
const PURE = [
  /^rbac\/_?(rules|render|objects)\.ts$/,
  /^core\/(names|labels|errors|url)\.ts$/,
  /^image\/_?(tar|oci|archive|elf|layer|layout|aicr-image|referrers)\.ts$/,
  /^image\/registry\/_?(reference|plan|challenge|referrer-tags)\.ts$/,
  /^image\/attest\/_(facts|spdx|provenance|image-attestations|purl|license)\.ts$/,
  /^image\/sign\/(_payload|_ecdsa|_nacl|_signature|sign-archive)\.ts$/,
  /^image\/verify\/(report|_documents)\.ts$/,
  /^run\/run-id\.ts$/,
  /^snapshot\/_?(build|schema|cm-uri|configmap|providers|table|template|readings)\.ts$/,
  /^diff\/(compare|glob|report|fleet|fleet-report|node-specific)\.ts$/,
  /^remote\/_(fleet-plan|contexts-files|contexts-summary)\.ts$/,
  /^collect\/_network-(group|readings|cluster)\.ts$/,
  /^collect\/_dbus-(signature|marshal|unmarshal|message|auth)\.ts$/,
  /^collect\/_systemd-readings\.ts$/,
  /^commands\/_config-flags\.ts$/,
  /^core\/versions\.ts$/,
];
const IO_MODULES = /^(node:)?(fs|fs\/promises|child_process|net|http|https|tls|dgram)$/;

const top = (file: string): string => (file.includes("/") ? (file.split("/")[0] ?? file) : file);
const layerOf = (file: string): number => LAYERS.findIndex((l) => l.includes(top(file)));

const problems: string[] = [];
const graph = new Map<string, Set<string>>();
for (const path of await walk(src)) {
  const file = relative(src, path);
  const text = await readFile(path, "utf8");
  const specs = [
    ...text.matchAll(/(?:import|export)[^"'`;]*?from\s*["']([^"']+)["']|import\s*\(?\s*["']([^"']+)["']/g),
  ].map((m) => m[1] ?? m[2] ?? "");
  if (layerOf(file) < 0)
    problems.push(`${file}: not in any layer; add its folder to LAYERS in scripts/check-layers.ts`);
  for (const spec of specs) {
    if (spec.startsWith("@kubernetes/client-node") && top(file) !== "kube")
      problems.push(`${file}: imports ${spec} outside src/kube`);
    if (PURE.some((re) => re.test(file)) && IO_MODULES.test(spec))
      problems.push(`${file}: pure builder imports I/O module ${spec}`);
    if (!spec.startsWith(".")) continue;
    const target = relative(src, resolve(dirname(path), spec));
    if (target.startsWith("..")) {
      problems.push(`${file}: imports ${spec} from outside src/`);
      continue;
    }
    if (!graph.has(file)) graph.set(file, new Set());
    graph.get(file)?.add(target);
    const base = target.split("/").at(-1) ?? "";
    // cli.ts is the commands' own root (it reads argv and defines them).
    const home = top(file) === "cli.ts" ? "commands" : top(file);
    if (base.startsWith("_") && top(target) !== home)
      problems.push(
        `${file}: imports ${target}, which is private to ${top(target)}/ (its public files have no "_")`,
      );
    if (layerOf(target) < layerOf(file))
      problems.push(`${file}: imports ${target}, which is in an outer layer`);
    if (
      top(file) === "commands" &&
      top(target) === "commands" &&
      !target.split("/")[1]?.startsWith("_") &&
      target !== file
    ) {
      problems.push(`${file}: commands must not import each other (${target}); move shared code down`);
    }
  }
}

const testDir = join(root, "test");
for (const path of await walk(testDir)) {
  if (path.includes("/node_modules/")) continue;
  const text = await readFile(path, "utf8");
  for (const m of text.matchAll(
    /(?:import|export)[^"'`;]*?from\s*["'](\.[^"']+)["']|import\s*\(\s*["'](\.[^"']+)["']/g,
  )) {
    const target = relative(root, resolve(dirname(path), m[1] ?? m[2] ?? ""));
    if (target.startsWith("scripts/"))
      problems.push(
        `${relative(root, path)}: imports ${target}; run the script as a program, or share through test/support`,
      );
  }
}

problems.push(...findCycles(graph).map((c) => `import cycle: ${c.join(" → ")}`));
problems.push(...(await checkTree(root)));

if (problems.length > 0) {
  console.error(`layer check failed:\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log("layer check passed");
