/**
 * ARCHITECTURE.md's tree of src/ must name every file under src/, and only files that exist: the
 * map a newcomer reads is checked in the gate like the layer rules. Run by scripts/check-layers.ts.
 *
 * The tree's shape: under "src/", a line per entry, indented two spaces per folder level; the entry
 * is one or more names (`os.ts os-parse.ts`, `jobs/gate.ts`, `registry/`) and then, after two or
 * more spaces, its description.
 *
 * test/unit mirrors src/ (checkUnitMirror, in the gate): each
 * test/unit/<dir>/<name>.test.ts tests src/<dir>/<name>.ts or src/<dir>/_<name>.ts; a second file
 * for one module says what it covers after a dot (<name>.<aspect>.test.ts). A file there that is
 * not a test is a helper of the tests beside it and starts with "_" (e.g. _helpers.ts).
 *
 *   bun scripts/check-tree.ts [--root <dir>] [--unit-mirror] [--list]
 *     the problems, one a line, exit 1 if any; --unit-mirror checks test/unit even while the rule is
 *     off; --list prints the src/ files the tree names instead (in the tree's order).
 */
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";

/** Every .ts file below `dir` (the layer check walks src/ with it too). */
export async function walk(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) =>
      e.isDirectory()
        ? walk(join(dir, e.name))
        : Promise.resolve(e.name.endsWith(".ts") ? [join(dir, e.name)] : []),
    ),
  );
  return nested.flat();
}

/** The files ARCHITECTURE.md's tree names under src/, as paths relative to src/. */
export function treeFiles(markdown: string): string[] {
  const lines = markdown.split("\n");
  const start = lines.indexOf("src/");
  if (start < 0) throw new Error('ARCHITECTURE.md has no "src/" tree');
  const folders: string[] = [];
  const files: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith("  ")) break; // the next top-level entry (test/, the closing fence)
    const depth = Math.floor((line.length - line.trimStart().length) / 2) - 1;
    folders.length = depth;
    const names = (line.trim().split(/\s{2,}/)[0] ?? "").split(" ").filter(Boolean);
    for (const name of names) {
      if (name.endsWith("/")) folders[depth] = name.slice(0, -1);
      else if (name.endsWith(".ts")) files.push([...folders.slice(0, depth), name].join("/"));
    }
  }
  return files;
}

/**
 * Whether the gate checks that test/unit mirrors src/ (checkUnitMirror). Off until the unit tests
 * are moved (bun scripts/mirror-unit-tests.ts --apply); then true.
 */
export const ENFORCE_UNIT_MIRROR = true;

export async function checkTree(
  root: string,
  options: { unitMirror?: boolean } = { unitMirror: ENFORCE_UNIT_MIRROR },
): Promise<string[]> {
  const src = join(root, "src");
  const actual = new Set((await walk(src)).map((p) => relative(src, p)));
  const named = new Set(treeFiles(await readFile(join(root, "ARCHITECTURE.md"), "utf8")));
  return [
    ...[...actual].filter((f) => !named.has(f)).map((f) => `src/${f}: missing from ARCHITECTURE.md's tree`),
    ...[...named]
      .filter((f) => !actual.has(f))
      .map((f) => `src/${f}: named in ARCHITECTURE.md's tree, but no such file`),
    ...(options.unitMirror ? await checkUnitMirror(root) : []),
  ].sort();
}

/**
 * The src/ modules a test/unit path (relative to test/unit) may test: `<dir>/<name>[.<aspect>].test.ts`
 * → src/<dir>/<name>.ts or src/<dir>/_<name>.ts. Undefined for a file that is not a test.
 */
export function mirroredModules(unitPath: string): string[] | undefined {
  const m = unitPath.match(/^(?:(.+)\/)?([^/.]+)(?:\.[^/]+)?\.test\.ts$/);
  if (!m) return undefined;
  const dir = m[1] ? `${m[1]}/` : "";
  return [`${dir}${m[2]}.ts`, `${dir}_${m[2]}.ts`];
}

/** Every test/unit file that does not mirror a src/ module, and every helper there without a leading "_". */
export async function checkUnitMirror(root: string): Promise<string[]> {
  const unit = join(root, "test/unit");
  if (!existsSync(unit)) return [];
  const src = new Set((await walk(join(root, "src"))).map((p) => relative(join(root, "src"), p)));
  const problems: string[] = [];
  for (const path of (await walk(unit)).map((p) => relative(unit, p)).sort()) {
    const modules = mirroredModules(path);
    if (modules === undefined) {
      if (!(path.split("/").at(-1) ?? "").startsWith("_"))
        problems.push(`test/unit/${path}: not a test, so a helper: its name starts with "_"`);
    } else if (!modules.some((m) => src.has(m)))
      problems.push(`test/unit/${path}: tests no src/ module of its name (src/${modules.join(" or src/")})`);
  }
  return problems;
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const at = args.indexOf("--root");
  const root = at >= 0 && args[at + 1] ? args[at + 1]! : join(import.meta.dir, "..");
  if (args.includes("--list")) {
    for (const f of treeFiles(await readFile(join(root, "ARCHITECTURE.md"), "utf8"))) console.log(f);
    process.exit(0);
  }
  const problems = await checkTree(root, {
    unitMirror: ENFORCE_UNIT_MIRROR || args.includes("--unit-mirror"),
  });
  for (const p of problems) console.error(p);
  process.exit(problems.length > 0 ? 1 : 0);
}
