import { lstat, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { AicrError } from "../core/errors.ts";
import { writeFileAtomic } from "../core/files.ts";
import { type FleetReport, multiDocument, nodeFileName } from "./_fleet-plan.ts";
import type { FleetNodeResult } from "./fleet.ts";

/**
 * `-o <dir>/`: the directory created if absent (never through a symlink: checked again here, minutes
 * after the pre-flight), then `<node>.yaml|json` per ok node and fleet.json, each written atomically.
 */
export async function writeFleetDir(
  dir: string,
  nodes: readonly FleetNodeResult[],
  report: FleetReport,
  ext: "yaml" | "json",
): Promise<number> {
  await mkdir(dir, { mode: 0o755 }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== "EEXIST")
      throw new AicrError("INTERNAL", `cannot create --output directory ${JSON.stringify(dir)}`, {
        remedy: "check its parent's permissions, or choose another -o <dir>/",
        cause: err,
      });
  });
  const s = await lstat(dir);
  if (s.isSymbolicLink() || !s.isDirectory())
    throw new AicrError(
      "INVALID_REQUEST",
      `--output ${JSON.stringify(dir)} is no longer a directory (a symlink or a file replaced it): nothing was written there`,
      {
        remedy: "remove what stands at that path, or choose another -o <dir>/",
      },
    );
  let written = 0;
  for (const n of nodes) {
    if (n.content === undefined) continue;
    await writeFileAtomic(join(dir, nodeFileName(n.record.node, ext)), n.content, { flag: "--output" });
    written++;
  }
  await writeFileAtomic(join(dir, "fleet.json"), `${JSON.stringify(report, null, 2)}\n`, {
    flag: "--output",
  });
  return written;
}

/** stdout: one multi-document YAML (`---` per node), or one JSON array of the node documents. */
export function fleetStdout(nodes: readonly FleetNodeResult[], format: "yaml" | "json"): string {
  const ok = nodes
    .filter((n) => n.content !== undefined)
    .map((n) => ({ node: n.record.node, content: n.content as string }));
  if (format === "yaml") return multiDocument(ok);
  const sorted = ok.sort((a, b) => a.node.localeCompare(b.node));
  return `[\n${sorted.map((d) => d.content.trimEnd()).join(",\n")}\n]\n`;
}
