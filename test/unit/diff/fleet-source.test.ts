import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "../../../src/core/log.ts";
import { loadFleet, resolveFleetBaseline, splitDocuments } from "../../../src/diff/fleet-source.ts";
import { rejection } from "../../support/reject.ts";

const warnings: string[] = [];
const log: Logger = {
  error: () => {},
  warn: (m) => warnings.push(String(m)),
  info: () => {},
  debug: () => {},
};

const snap = (node: string | undefined, osrelease = "6.8") =>
  [
    "apiVersion: aicr.run/v1",
    "kind: Snapshot",
    "metadata:",
    '  timestamp: "2026-01-01T00:00:00Z"',
    "  version: 0.1.0",
    `  source-node: "${node ?? ""}"`,
    "measurements:",
    "  - type: OS",
    "    subtypes:",
    "      - subtype: sysctl",
    "        data:",
    `          /proc/sys/kernel/osrelease: "${osrelease}"`,
    "",
  ].join("\n");

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "aicr-fleet-src-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("reading a fleet", () => {
  test("splitDocuments: --- and ... lines, empty and comment-only documents dropped", () => {
    expect(splitDocuments("---\na: 1\n---\n# only a comment\n---\nb: 2\n...\n")).toEqual(["a: 1", "b: 2"]);
    expect(splitDocuments("a: 1\n---   \nb: |\n  --- not a marker\n")).toEqual([
      "a: 1",
      "b: |\n  --- not a marker\n",
    ]);
    expect(splitDocuments("--- {c: 3}\n")).toEqual(["{c: 3}\n"]);
    expect(splitDocuments("\n# nothing\n")).toEqual([]);
  });

  test("a directory: *.yaml, *.yml, *.json, fleet.json and other files skipped; names by source-node, else the stem", async () => {
    const d = join(dir, "ok");
    mkdirSync(d);
    writeFileSync(join(d, "one.yaml"), snap("node-1"));
    writeFileSync(join(d, "node-2.yml"), snap(undefined));
    writeFileSync(join(d, "three.json"), JSON.stringify({ measurements: [] }));
    writeFileSync(join(d, "fleet.json"), '{"nodes": []}');
    writeFileSync(join(d, "notes.txt"), "not a snapshot");
    const fleet = await loadFleet(d, log);
    expect(fleet.nodes.map((n) => n.name)).toEqual(["node-2", "node-1", "three"]);
    expect(warnings.some((w) => w.includes("three.json"))).toBe(true);
  });

  test("a multi-document file: one node per document; errors name the document", async () => {
    const f = join(dir, "all.yaml");
    writeFileSync(f, `---\n${snap("a")}---\n${snap("b")}`);
    expect((await loadFleet(f, log)).nodes.map((n) => n.name)).toEqual(["a", "b"]);

    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, `${snap("a")}---\n${snap("b").replace("kind: Snapshot", "kind: Nope")}`);
    const err = await rejection(loadFleet(bad, log));
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.message).toContain(`${bad} (document 2)`);

    const unnamed = join(dir, "unnamed.yaml");
    writeFileSync(unnamed, `${snap(undefined)}---\n${snap(undefined)}`);
    expect((await loadFleet(unnamed, log)).nodes.map((n) => n.name)).toEqual(["unnamed#1", "unnamed#2"]);
  });

  test("refused: a duplicate node (both sources named), an empty directory, no such path", async () => {
    const d = join(dir, "dup");
    mkdirSync(d);
    writeFileSync(join(d, "a.yaml"), snap("same"));
    writeFileSync(join(d, "b.yaml"), snap("same"));
    const dup = await rejection(loadFleet(d, log));
    expect(dup.code).toBe("INVALID_REQUEST");
    expect(dup.message).toContain(
      `node "same" appears twice in --fleet: ${join(d, "a.yaml")} and ${join(d, "b.yaml")}`,
    );

    const empty = join(dir, "empty");
    mkdirSync(empty);
    writeFileSync(join(empty, "fleet.json"), "{}");
    expect((await rejection(loadFleet(empty, log))).message).toContain("holds no snapshot");

    const emptyFile = join(dir, "empty.yaml");
    writeFileSync(emptyFile, "# nothing\n---\n");
    expect((await rejection(loadFleet(emptyFile, log))).message).toContain("holds no snapshot document");

    expect((await rejection(loadFleet(join(dir, "nope"), log))).message).toContain(
      "no such file or directory",
    );
  });

  test("--baseline: a node by name, else a file, else refused with the fleet's names", async () => {
    const f = join(dir, "pair.yaml");
    writeFileSync(f, `${snap("a")}---\n${snap("b")}`);
    const fleet = await loadFleet(f, log);
    expect(await resolveFleetBaseline("b", fleet, log)).toMatchObject({ name: "b", member: true });
    const golden = join(dir, "golden.yaml");
    writeFileSync(golden, snap("elsewhere"));
    expect(await resolveFleetBaseline(golden, fleet, log)).toMatchObject({ name: golden, member: false });
    const err = await rejection(resolveFleetBaseline("c", fleet, log));
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.message).toContain('--baseline "c" is neither a node of the fleet (a, b) nor a snapshot file');
  });
});
