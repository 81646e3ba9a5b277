/**
 * A CheckContext for running one conformance check in process against a test cluster, as its pod
 * would (validator/run.ts builds the real one): evidence collected, waits scaled, the namespace the
 * run would have created made here.
 */
import { delay } from "../../../src/core/async.ts";
import { createLogger } from "../../../src/core/log.ts";
import { nameWithRunId } from "../../../src/run/names.ts";
import { boundedGet } from "../../../src/validate/checks/_http.ts";
import type { CheckContext } from "../../../src/validate/checks/context.ts";
import { adminClient } from "../../cluster/standins/_host.ts";
import type { TestCluster } from "../../cluster/testbed.ts";

export const CHECK_IMAGE = "ghcr.io/nvidia/aicr:validate-test";

export interface TestCheckContext extends CheckContext {
  /** Every evidence block written, in order: label → data. */
  blocks: { label: string; data: string; equivalent?: string | undefined }[];
}

let counter = 0;

/** A fresh run ID of this process (its form as the run makes it). */
export function testRunId(): string {
  counter++;
  return `20261202-120000-${(Date.now() % 0xffffffff).toString(16).padStart(8, "0")}${counter.toString(16).padStart(8, "0")}`;
}

/**
 * The context of `check`: the admin's client unless `client` is given, the check's namespace created
 * (as the run does) unless `createNamespace: false`.
 */
export async function checkContext(
  cluster: TestCluster,
  check: string,
  o: Partial<CheckContext> & { createNamespace?: boolean; waitScale?: number } = {},
): Promise<TestCheckContext> {
  const runId = o.runId ?? testRunId();
  const client = o.client ?? adminClient(cluster);
  const testNamespace = o.testNamespace ?? nameWithRunId(`aicr-${check}`, runId);
  const labels = {
    "app.kubernetes.io/managed-by": "aicr",
    "aicr.run/run-id": runId,
    "aicr.run/validator": check,
  };
  if (o.createNamespace !== false)
    await client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: testNamespace, labels } });
  const signal = o.signal ?? AbortSignal.timeout(600_000);
  const blocks: TestCheckContext["blocks"] = [];
  const scale = o.waitScale ?? 1;
  return {
    client,
    recipe: o.recipe,
    snapshot: o.snapshot,
    namespace: o.namespace ?? "aicr-validation",
    testNamespace,
    runId,
    name: (base) => nameWithRunId(base, runId),
    labels,
    image: o.image ?? CHECK_IMAGE,
    ncclImage: o.ncclImage,
    placement: o.placement ?? {},
    signal,
    evidence: (label, data, equivalent) => void blocks.push({ label, data, equivalent }),
    log: o.log ?? createLogger({ write: () => {} }),
    now: () => Date.now(),
    waitMs: (ms) => Math.max(1, Math.round(ms * scale)),
    sleep: (ms) => delay(ms, signal),
    httpGet: (url) => boundedGet(url, signal),
    blocks,
  };
}
