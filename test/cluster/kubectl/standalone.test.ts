import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { KUBECTL, kubectl } from "./kubectl.ts";

const SCRIPT = join(import.meta.dir, "..", "standalone.ts");

async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  reader.releaseLock();
  return text.split("\n")[0]!;
}

describe.skipIf(!KUBECTL)("npm run cluster (standalone.ts)", () => {
  test("prints KUBECONFIG first, kubectl lists its nodes, SIGTERM stops it", async () => {
    const proc = Bun.spawn([process.execPath, SCRIPT], { stdout: "pipe", stderr: "pipe" });
    const line = await firstLine(proc.stdout);
    expect(line).toMatch(/^KUBECONFIG=\/.+/);
    const kubeconfig = line.slice("KUBECONFIG=".length);
    const nodes = await kubectl(kubeconfig, ["get", "nodes", "-o", "name"]);
    expect(nodes.stdout).toBe("node/cpu-node-1\nnode/gpu-node-1\nnode/gpu-node-2\n");
    const gpu = await kubectl(kubeconfig, [
      "get",
      "nodes",
      "-l",
      "nvidia.com/gpu.present=true",
      "-o",
      "json",
    ]);
    const items = JSON.parse(gpu.stdout).items;
    expect(
      items.map(
        (n: { status: { allocatable: Record<string, string> } }) => n.status.allocatable["nvidia.com/gpu"],
      ),
    ).toEqual(["8", "8"]);
    expect(items[1].spec.taints).toEqual([{ key: "nvidia.com/gpu", value: "present", effect: "NoSchedule" }]);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  });
});
