import { expect, test } from "bun:test";
import { join } from "node:path";
import { checkTree, treeFiles } from "../../scripts/check-tree.ts";

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

test("the tree's files: indentation is the folder, several names on a line, relative paths", () => {
  expect(treeFiles(TREE)).toEqual([
    "main.ts",
    "image/tar.ts",
    "image/oci.ts",
    "image/registry/push.ts",
    "image/save.ts",
    "legacy/jobs/gate.ts",
    "legacy/jobs/run-one.ts",
  ]);
});

test("this repository's ARCHITECTURE.md names exactly the files under src/", async () => {
  expect(await checkTree(join(import.meta.dir, "../.."))).toEqual([]);
});
