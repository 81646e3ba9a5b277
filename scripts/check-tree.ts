/**
 * ARCHITECTURE.md's tree of src/ must name every file under src/, and only files that exist: the
 * map a newcomer reads is checked in the gate like the layer rules. Run by scripts/check-layers.ts.
 *
 * The tree's shape: under "src/", a line per entry, indented two spaces per folder level; the entry
 * is one or more names (`os.ts os-parse.ts`, `jobs/gate.ts`, `registry/`) and then, after two or
 * more spaces, its description.
 */
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

export async function checkTree(root: string): Promise<string[]> {
  const src = join(root, "src");
  const actual = new Set((await walk(src)).map((p) => relative(src, p)));
  const named = new Set(treeFiles(await readFile(join(root, "ARCHITECTURE.md"), "utf8")));
  return [
    ...[...actual].filter((f) => !named.has(f)).map((f) => `src/${f}: missing from ARCHITECTURE.md's tree`),
    ...[...named]
      .filter((f) => !actual.has(f))
      .map((f) => `src/${f}: named in ARCHITECTURE.md's tree, but no such file`),
  ].sort();
}

if (import.meta.main) {
  const problems = await checkTree(join(import.meta.dir, ".."));
  for (const p of problems) console.error(p);
  process.exit(problems.length > 0 ? 1 : 0);
}
