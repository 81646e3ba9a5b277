/** scripts/check-tree.ts as a program, on this repository and on trees the tests write. */
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const SCRIPT = join(import.meta.dir, "../../scripts/check-tree.ts");
const scratch = mkdtempSync(join(tmpdir(), "aicr-check-tree-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let roots = 0;

function checkTree(args: string[]): { code: number; stdout: string; stderr: string } {
  const r = Bun.spawnSync([process.execPath, SCRIPT, ...args], { stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

/** A repository root holding these files (path → text). */
function tree(files: Record<string, string>): string {
  const root = join(scratch, `r${roots++}`);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const TREE = [
  "```",
  "src/",
  "  main.ts                entry",
  "  image/                 the image",
  "    tar.ts oci.ts        two files on one line",
  "    registry/            a sub-folder",
  "      push.ts            pushArchive",
  "    save.ts              back one level",
  "  legacy/",
  "    jobs/gate.ts jobs/run-one.ts   paths below the folder",
  "test/",
  "  unit/                  not part of src",
  "```",
].join("\n");

const SRC = [
  "main.ts",
  "image/tar.ts",
  "image/oci.ts",
  "image/registry/push.ts",
  "image/save.ts",
  "legacy/jobs/gate.ts",
  "legacy/jobs/run-one.ts",
];

test("the tree's files: indentation is the folder, several names on a line, relative paths", () => {
  const root = tree({ "ARCHITECTURE.md": TREE });
  expect(checkTree(["--root", root, "--list"]).stdout.split("\n").filter(Boolean)).toEqual(SRC);
});

test("a file the tree does not name, and a name with no file: one line each, exit 1", () => {
  const files = Object.fromEntries(SRC.filter((f) => f !== "image/save.ts").map((f) => [`src/${f}`, ""]));
  const root = tree({ "ARCHITECTURE.md": TREE, ...files, "src/image/extra.ts": "" });
  expect(checkTree(["--root", root])).toEqual({
    code: 1,
    stdout: "",
    stderr:
      "src/image/extra.ts: missing from ARCHITECTURE.md's tree\n" +
      "src/image/save.ts: named in ARCHITECTURE.md's tree, but no such file\n",
  });
});

test("this repository's ARCHITECTURE.md names exactly the files under src/", () => {
  expect(checkTree([])).toEqual({ code: 0, stdout: "", stderr: "" });
});

test("test/unit mirrors src/: <dir>/<name>[.<aspect>].test.ts names src/<dir>/<name>.ts or _<name>.ts; helpers start with _", () => {
  const src = Object.fromEntries(SRC.map((f) => [`src/${f}`, ""]));
  const unit = (paths: string[]) => Object.fromEntries(paths.map((p) => [`test/unit/${p}`, ""]));
  const mirrored = unit([
    "main.test.ts",
    "image/tar.test.ts",
    "image/tar.long-names.test.ts",
    "image/registry/push.test.ts",
    "image/_fixtures.ts",
    "legacy/jobs/gate.test.ts",
  ]);
  const withPrivate = TREE.replace("    save.ts   ", "    save.ts _layer.ts");
  const good = tree({ "ARCHITECTURE.md": withPrivate, ...src, "src/image/_layer.ts": "", ...mirrored });
  expect(checkTree(["--root", good, "--unit-mirror"])).toEqual({ code: 0, stdout: "", stderr: "" });
  writeFileSync(join(good, "test/unit/image/layer.test.ts"), ""); // src/image/_layer.ts
  expect(checkTree(["--root", good, "--unit-mirror"])).toEqual({ code: 0, stdout: "", stderr: "" });

  const bad = tree({
    "ARCHITECTURE.md": TREE,
    ...src,
    ...unit(["errors.test.ts", "image/push.test.ts", "image/helpers.ts", "scripts/prereqs.test.ts"]),
  });
  expect(checkTree(["--root", bad]).code).toBe(1); // enforced by default: the layer check runs it
  expect(checkTree(["--root", bad, "--unit-mirror"])).toEqual({
    code: 1,
    stdout: "",
    stderr: [
      "test/unit/errors.test.ts: tests no src/ module of its name (src/errors.ts or src/_errors.ts)",
      'test/unit/image/helpers.ts: not a test, so a helper: its name starts with "_"',
      "test/unit/image/push.test.ts: tests no src/ module of its name (src/image/push.ts or src/image/_push.ts)",
      "test/unit/scripts/prereqs.test.ts: tests no src/ module of its name (src/scripts/prereqs.ts or src/scripts/_prereqs.ts)",
      "",
    ].join("\n"),
  });
});
