import { describe, expect, test } from "bun:test";
import { ContainerLog, logTimestamp } from "./logs.ts";

describe("ContainerLog", () => {
  let t = Date.parse("2026-01-01T00:00:00.250Z");
  const log = () => new ContainerLog(() => new Date(t));

  test("timestamps use the kubelet's fixed nine-digit format", () => {
    expect(logTimestamp(new Date("2026-01-01T00:00:00Z"))).toBe("2026-01-01T00:00:00.000000000Z");
  });

  test("partial lines join the line they continue and keep its timestamp", () => {
    const l = log();
    l.write("par");
    t += 1000;
    l.write("tial\nnext");
    expect(l.text()).toBe("partial\nnext");
    expect(l.text({ timestamps: true })).toBe(
      "2026-01-01T00:00:00.250000000Z partial\n2026-01-01T00:00:01.250000000Z next",
    );
    expect(l.text({ tailLines: 1 })).toBe("next");
  });

  test("follow sends the backlog, then new writes, and ends when the container does", async () => {
    const l = log();
    l.write("a\n");
    const got: string[] = [];
    const ended = l.follow((c) => got.push(c), new AbortController().signal, { timestamps: true });
    l.write("b");
    l.write("c\n");
    l.finish();
    await ended;
    expect(got.join("")).toBe(l.text({ timestamps: true }));
  });

  test("follow ends on abort", async () => {
    const l = log();
    const ac = new AbortController();
    const ended = l.follow(() => {}, ac.signal);
    ac.abort();
    await ended;
    expect(l.finished).toBe(false);
  });

  test("termination message fallback keeps the last 2048 bytes", () => {
    const l = log();
    l.write(`${"x".repeat(3000)}\n`);
    expect(l.tailForTerminationMessage()).toHaveLength(2048);
  });
});

describe("KubeletLogs test seeding", () => {
  test("append/finish write to a pod's container log without a kubelet", async () => {
    const { Store, resource } = await import("../store.ts");
    const { kubeletLogs } = await import("./logs.ts");
    const store = new Store();
    store.create(resource("namespaces"), { metadata: { name: "ns" } });
    store.create(resource("pods"), {
      metadata: { name: "p", namespace: "ns" },
      spec: { nodeName: "n", containers: [{ name: "c", image: "i" }] },
    });
    const logs = kubeletLogs(store);
    logs.append("ns", "p", "c", "one\n");
    logs.finish("ns", "p", "c");
    const found = logs.get("ns", "p");
    expect("log" in found && found.log.text()).toBe("one\n");
    expect("log" in found && found.log.finished).toBe(true);
  });
});
