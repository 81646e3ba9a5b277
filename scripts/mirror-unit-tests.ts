/**
 * One-off: moves the files under test/unit so that the tree mirrors src/ (the rule of
 * scripts/check-tree.ts's checkUnitMirror), and the tests of scripts and of test/support out of it.
 *
 *   bun scripts/mirror-unit-tests.ts           the plan: one `git mv` a line; exit 1 if a file has no place
 *   bun scripts/mirror-unit-tests.ts --apply   performs it: git mv, then rewrites the relative imports
 *                                              (and join(import.meta.dir, "…") paths) of the moved files
 *                                              and of every file that imports one (left unstaged: it
 *                                              prints them; `git add` them with the moves)
 *
 * A file that already mirrors a module stays. Every other one has its target in TARGETS (decided by
 * what it tests: its imports and its describe blocks); a target must itself pass the rule (or leave
 * test/unit), and no two files may meet. Run from a clean checkout of what is to be moved; afterwards
 * set ENFORCE_UNIT_MIRROR = true in scripts/check-tree.ts and run `bun scripts/check-layers.ts`.
 */
import { existsSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { checkUnitMirror, mirroredModules, walk } from "./check-tree.ts";

/** Where each test/unit file that mirrors no module by its name goes (paths from the repository root). */
export const TARGETS: Record<string, string> = {
  // tests of a src/ module under another name, or at the top of test/unit
  "test/unit/deployer/names.test.ts": "test/unit/run/names.test.ts", // run/names.ts (runNames)
  "test/unit/commands/flag-values.test.ts": "test/unit/commands/argv.flag-values.test.ts", // _argv.ts flagValues
  "test/unit/commands/namespace.test.ts": "test/unit/commands/args.test.ts", // _args.ts resolveNamespace
  "test/unit/commands/snapshot-flags-extra.test.ts": "test/unit/commands/snapshot-flags.test.ts",
  // the value parsers of _parse.ts first, then both resolvers (not _flags.ts, whose name it has)
  "test/unit/commands/flags.test.ts": "test/unit/commands/parse.test.ts",
  "test/unit/core/file-destination.test.ts": "test/unit/core/files.destination.test.ts", // checkFileDestination
  "test/unit/diff/fleet-node-specific.test.ts": "test/unit/diff/node-specific.test.ts",
  "test/unit/errors.test.ts": "test/unit/core/errors.test.ts",
  "test/unit/files.test.ts": "test/unit/core/files.test.ts",
  "test/unit/kube/config-contexts.test.ts": "test/unit/kube/config.test.ts", // listContexts
  "test/unit/kube/plain-http.test.ts": "test/unit/kube/http.test.ts", // KubeHttp over http://
  "test/unit/rbac-render.test.ts": "test/unit/rbac/render.test.ts", // rbac/_render.ts
  "test/unit/run-id.test.ts": "test/unit/run/run-id.test.ts",
  "test/unit/validate/checks.test.ts": "test/unit/validate/validator/checks.test.ts", // validator/_checks.ts
  "test/unit/validate/nvidia-smi.test.ts": "test/unit/validate/jobs/run-nvidia-smi.test.ts",
  "test/unit/validate/objects.test.ts": "test/unit/validate/jobs/objects.test.ts", // jobs/_objects.ts
  // helpers of the tests beside them: a leading "_"
  "test/unit/collect/dbus-peer.ts": "test/unit/collect/_dbus-peer.ts",
  "test/unit/collect/fake-cluster.ts": "test/unit/collect/_fake-cluster.ts",
  "test/unit/collect/helpers.ts": "test/unit/collect/_helpers.ts",
  "test/unit/collect/network-sample.ts": "test/unit/collect/_network-sample.ts",
  // tests of scripts/ and of test/support: out of test/unit
  "test/unit/check-tree.test.ts": "test/scripts/check-tree.test.ts",
  "test/unit/import-cycles.test.ts": "test/scripts/import-cycles.test.ts",
  "test/unit/scripts/prereqs.test.ts": "test/scripts/prereqs.test.ts",
  "test/unit/support/until.test.ts": "test/support/until.test.ts",
};

export interface Plan {
  moves: [from: string, to: string][];
  /** Files that cannot be placed, and targets that break the rule or collide, with why. */
  problems: string[];
}

/** Whether a path under test/unit (relative to it) passes the mirror rule against these src/ files. */
const mirrors = (unitPath: string, src: Set<string>): boolean => {
  const modules = mirroredModules(unitPath);
  return modules === undefined
    ? (unitPath.split("/").at(-1) ?? "").startsWith("_")
    : modules.some((m) => src.has(m));
};

export async function plan(root: string, targets: Record<string, string> = TARGETS): Promise<Plan> {
  const src = new Set((await walk(join(root, "src"))).map((p) => relative(join(root, "src"), p)));
  const unit = (await walk(join(root, "test/unit"))).map((p) => relative(root, p)).sort();
  const moves: [string, string][] = [];
  const problems: string[] = [];
  const taken = new Map<string, string>();
  for (const file of unit) {
    const target = targets[file];
    if (target === undefined) {
      if (!mirrors(relative("test/unit", file), src))
        problems.push(`${file}: mirrors no src/ module and has no target in TARGETS`);
      continue;
    }
    if (target.startsWith("test/unit/") && !mirrors(relative("test/unit", target), src))
      problems.push(`${file} → ${target}: the target mirrors no src/ module either`);
    if (existsSync(join(root, target))) problems.push(`${file} → ${target}: the target exists`);
    const other = taken.get(target);
    if (other) problems.push(`${file} → ${target}: ${other} goes there too`);
    taken.set(target, file);
    moves.push([file, target]);
  }
  for (const from of Object.keys(targets))
    if (!unit.includes(from)) problems.push(`${from}: in TARGETS, but no such file (moved already?)`);
  return { moves, problems };
}

/** A relative specifier from `fromDir` to `path`, as imports write it ("./x.ts", "../y/z.ts"). */
const specifier = (fromDir: string, path: string): string => {
  const rel = relative(fromDir, path);
  return rel.startsWith(".") ? rel : `./${rel}`;
};

// import … from "x", export … from "x", import "x", import("x"), require("x"), mock.module("x"),
// join(import.meta.dir, "x"), `${import.meta.dir}/x`
const SPECIFIERS = [
  /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*|\bmock\.module\s*\(\s*|import\.meta\.dir\s*,\s*)(["'])(\.\.?\/[^"']*|\.\.?)\2/g,
  /(\$\{import\.meta\.dir\}\/)()(\.\.?\/[^`$]*|\.\.?)(?=[`$])/g,
];

/**
 * The text of `file` (now at `now`, formerly at `was`, both relative to root) with every relative
 * path it names pointed at where that path is now.
 */
export function rewrite(
  text: string,
  was: string,
  now: string,
  moved: Map<string, string>,
  root: string,
): string {
  const oldDir = dirname(join(root, was));
  const newDir = dirname(join(root, now));
  let out = text;
  for (const re of SPECIFIERS)
    out = out.replace(re, (whole, lead: string, quote: string, spec: string) => {
      const target = resolve(oldDir, spec);
      const movedTo = moved.get(relative(root, target));
      const next = specifier(newDir, movedTo ? join(root, movedTo) : target);
      // keep "../.." style for directories (no "./" added to a bare parent path)
      const written = spec.endsWith("/") && !next.endsWith("/") ? `${next}/` : next;
      return written === spec ? whole : `${lead}${quote}${written}${quote}`;
    });
  return out;
}

function git(root: string, args: string[]): void {
  const r = Bun.spawnSync(["git", ...args], { cwd: root, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString().trim()}`);
}

/** Every .ts file of the tree that may import a test/unit file: test/ (not its fixtures) and scripts/. */
async function importers(root: string): Promise<string[]> {
  const dirs = [
    ...readdirSync(join(root, "test"), { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name !== "fixtures")
      .map((e) => join(root, "test", e.name)),
    join(root, "scripts"),
  ];
  const top = readdirSync(join(root, "test")).filter((n) => n.endsWith(".ts"));
  const files = [...top.map((n) => join(root, "test", n)), ...(await Promise.all(dirs.map(walk))).flat()];
  return files.map((p) => relative(root, p)).sort();
}

function removeEmptyDirs(dir: string): void {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return;
  for (const e of readdirSync(dir)) removeEmptyDirs(join(dir, e));
  if (readdirSync(dir).length === 0) rmdirSync(dir);
}

export async function apply(root: string, moves: [string, string][]): Promise<string[]> {
  const moved = new Map(moves);
  const was = new Map(moves.map(([from, to]) => [to, from]));
  for (const [from, to] of moves) {
    Bun.spawnSync(["mkdir", "-p", dirname(join(root, to))]);
    git(root, ["mv", from, to]);
  }
  const changed: string[] = [];
  for (const file of await importers(root)) {
    const text = readFileSync(join(root, file), "utf8");
    const next = rewrite(text, was.get(file) ?? file, file, moved, root);
    if (next === text) continue;
    writeFileSync(join(root, file), next);
    changed.push(file);
  }
  removeEmptyDirs(join(root, "test/unit"));
  return changed;
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const at = args.indexOf("--root");
  const root = resolve(at >= 0 && args[at + 1] ? args[at + 1]! : join(import.meta.dir, ".."));
  const { moves, problems } = await plan(root);
  for (const [from, to] of moves) console.log(`git mv ${from} ${to}`);
  for (const p of problems) console.error(`cannot place: ${p}`);
  if (problems.length > 0) process.exit(1);
  if (!args.includes("--apply")) process.exit(0);
  const changed = await apply(root, moves);
  console.log(`moved ${moves.length} files; rewrote the relative paths of ${changed.length} (unstaged):`);
  for (const f of changed) console.log(`  ${f}`);
  console.log(`stage them: git add ${changed.join(" ")}`);
  const left = await checkUnitMirror(root);
  for (const p of left) console.error(`still: ${p}`);
  const patterns = moves.flatMap(([from]) => ["-e", from]);
  const named = Bun.spawnSync(
    ["git", "grep", "-n", "-F", ...patterns, "--", ".", ":!scripts/mirror-unit-tests.ts"],
    {
      cwd: root,
      stdout: "pipe",
    },
  );
  const mentions = named.stdout.toString().trim();
  if (mentions) console.log(`the old paths are still named here (by hand):\n${mentions}`);
  console.log("next: ENFORCE_UNIT_MIRROR = true in scripts/check-tree.ts, then bun scripts/check-layers.ts");
  process.exit(left.length > 0 ? 1 : 0);
}
