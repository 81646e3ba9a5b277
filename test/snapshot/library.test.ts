/**
 * The library surface (src/index.ts) as an SDK user calls it: typed options with the CLI's defaults,
 * no flag strings, a silent default logger, and the same run isolation as the CLI.
 */
import { describe, expect, test } from "bun:test";
import { LABEL } from "../../src/core/labels.ts";
import { AicrError, collectSnapshot, KubeClient } from "../../src/index.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import {
  AGENT_IMAGE,
  freshNamespace,
  jobDeadlinesSince,
  lastSeq,
  RUN_OBJECT_KINDS,
  snapshotCluster,
  TEST_MS,
  untilNoRunObjects,
} from "./_harness.ts";

const INVOCATION_LABEL = LABEL.invocationId;

for (const backend of BACKENDS)
  describe(`[${backend}] collectSnapshot (the SDK entry)`, () => {
    const cluster = useCluster(backend, { start: snapshotCluster });
    const client = () => KubeClient.connect({ kubeconfig: cluster().kubeconfigFor("admin"), env: {} });

    test(
      "namespace and image only: the defaults apply (5m deadline → the Job's 360 s, cleanup on), the result is checked and nothing is left",
      async () => {
        const ns = await freshNamespace(cluster(), "sdk-defaults");
        const since = lastSeq(cluster());
        const result = await collectSnapshot({ client: client(), namespace: ns, image: AGENT_IMAGE });
        expect(result.document.metadata["run-id"]).toBe(result.runId);
        expect(result.content.startsWith("apiVersion:")).toBe(true);
        expect(result.kept).toEqual([]);
        expect(result.receipt.filter((r) => r.outcome === "deleted").length).toBeGreaterThanOrEqual(6);
        expect(jobDeadlinesSince(cluster(), ns, since)).toEqual([360]);
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "cleanup: false keeps the run's objects and lists them (the caller removes them)",
      async () => {
        const ns = await freshNamespace(cluster(), "sdk-kept");
        const result = await collectSnapshot({
          client: client(),
          namespace: ns,
          image: AGENT_IMAGE,
          cleanup: false,
          timeoutMs: 60_000,
        });
        expect(result.receipt).toEqual([]);
        expect(result.kept.map((k) => k.kind).sort()).toEqual([...RUN_OBJECT_KINDS].sort());
        const anchor = result.kept.find((k) => k.kind === "ClusterRole");
        await client().delete(
          { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", name: anchor?.name ?? "" },
          { propagationPolicy: "Foreground" },
        );
        await untilNoRunObjects(cluster(), ns, result.runId);
      },
      TEST_MS,
    );

    test(
      "the invocation ID is not the caller's: not in the options type, refused at run time before any request; each call makes its own",
      async () => {
        const before = lastSeq(cluster());
        const forged = "0123456789abcdef0123456789abcdef";
        // @ts-expect-error invocationId is not an SDK option (it proves which objects a run created).
        const typed = collectSnapshot({ client: client(), namespace: "sdk-forged", invocationId: forged });
        const err = await typed.catch((e: unknown) => e);
        expect(err).toBeInstanceOf(AicrError);
        expect((err as AicrError).code).toBe("INVALID_REQUEST");
        expect((err as AicrError).message).toContain("invocationId");
        // Past the type (plain JavaScript, a cast): refused the same way.
        const untyped = { client: client(), namespace: "sdk-forged", invocationId: forged } as Parameters<
          typeof collectSnapshot
        >[0];
        expect(((await collectSnapshot(untyped).catch((e: unknown) => e)) as AicrError).code).toBe(
          "INVALID_REQUEST",
        );
        expect(lastSeq(cluster())).toBe(before);

        // A run's objects carry an invocation ID of its own making, different for each call.
        const ns = await freshNamespace(cluster(), "sdk-invocation");
        const ids: string[] = [];
        for (let i = 0; i < 2; i++) {
          const result = await collectSnapshot({
            client: client(),
            namespace: ns,
            image: AGENT_IMAGE,
            cleanup: false,
            timeoutMs: 60_000,
          });
          const anchor = result.kept.find((k) => k.kind === "ClusterRole")?.name ?? "";
          const live = await client().get({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRole",
            name: anchor,
          });
          ids.push(live.metadata?.labels?.[INVOCATION_LABEL] ?? "");
          await client().delete(
            { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", name: anchor },
            { propagationPolicy: "Foreground" },
          );
          await untilNoRunObjects(cluster(), ns, result.runId);
        }
        expect(ids.every((id) => id !== "" && id !== forged)).toBe(true);
        expect(ids[0]).not.toBe(ids[1]);
      },
      TEST_MS,
    );

    test("a timeout that is not a positive number (or is above the longest timer) is refused before any request", async () => {
      const before = lastSeq(cluster());
      for (const timeoutMs of [0, -1, Number.NaN, 2 ** 31]) {
        const err = await collectSnapshot({ client: client(), namespace: "sdk-bad", timeoutMs }).catch(
          (e) => e,
        );
        expect(err).toBeInstanceOf(AicrError);
        expect((err as AicrError).code).toBe("INVALID_REQUEST");
      }
      expect(lastSeq(cluster())).toBe(before);
    });
  });
