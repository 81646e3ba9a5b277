import { closeSync, constants, existsSync, openSync, writeSync } from "node:fs";
import { AicrError, ExitStatus } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import type { KubeClient } from "../../kube/client.ts";
import type { ClusterPolicy, Json, V1Node, V1Pod } from "../../kube/types.ts";
import { parseSnapshot } from "../../snapshot/schema.ts";
import { findValidator, NVIDIA_SMI_CHECK, VALIDATOR_ENV, VALIDATORS } from "../_catalog.ts";
import { pickDataKey } from "../_inputs.ts";
import { parseRecipe, phaseConstraint } from "../recipe.ts";
import {
  expectedResources,
  GPU_OPERATOR_NAMESPACE,
  gpuOperatorVersion,
  nvidiaSmiVerdict,
  operatorHealth,
  VERSION_CONSTRAINT,
  type Verdict,
} from "./_checks.ts";
import { runIsolatedCheck } from "./_isolated.ts";
import { readNvidiaSmi } from "./_smi.ts";

const TERMINATION_LOG = "/dev/termination-log";

const silentLogger: Logger = { error() {}, warn() {}, info() {}, debug() {} };

function required(env: Readonly<Record<string, string | undefined>>, key: string): string {
  const value = env[key];
  if (!value) {
    throw new AicrError("INVALID_REQUEST", `validator mode needs the environment variable ${key}`, {
      remedy: "run validators only through aicr validate, which sets their environment",
    });
  }
  return value;
}

async function readData(client: KubeClient, namespace: string, name: string, what: string): Promise<string> {
  const cm = await client.get<{ data?: Record<string, string> }>({
    apiVersion: "v1",
    kind: "ConfigMap",
    namespace,
    name,
  });
  const key = pickDataKey(cm.data ?? {}, what);
  if (!key)
    throw new AicrError("INTERNAL", `ConfigMap ${namespace}/${name} holds no ${what}.yaml`, {
      remedy: "the run's data ConfigMap was changed while it ran: run aicr validate again",
    });
  return cm.data?.[key] ?? "";
}

const pods = (client: KubeClient) =>
  client.list<Json<V1Pod>>("v1", "Pod", { namespace: GPU_OPERATOR_NAMESPACE }).then((l) => l.items);

/** Runs one built-in check with the pod's ServiceAccount: reads the run's two ConfigMaps, then the cluster. */
export async function runValidatorCheck(
  name: string,
  client: KubeClient,
  env: Readonly<Record<string, string | undefined>>,
  signal: AbortSignal = new AbortController().signal,
  io: { writeStdout: (text: string) => void; log: Logger } = { writeStdout: () => {}, log: silentLogger },
): Promise<Verdict> {
  const entry = findValidator(name);
  if (!entry) {
    throw new AicrError("INVALID_REQUEST", `unknown validator ${JSON.stringify(name)}`, {
      remedy: `use one of: ${VALIDATORS.map((v) => v.name).join(", ")}`,
    });
  }
  if (entry.name === NVIDIA_SMI_CHECK) return checkNvidiaSmi(client, env, signal);
  const namespace = required(env, VALIDATOR_ENV.namespace);
  const snapshotName = required(env, VALIDATOR_ENV.snapshotConfigMap);
  const recipeName = required(env, VALIDATOR_ENV.recipeConfigMap);
  const [snapshotText, recipeText] = await Promise.all([
    readData(client, namespace, snapshotName, "snapshot"),
    readData(client, namespace, recipeName, "recipe"),
  ]);
  const snapshot = parseSnapshot(snapshotText, `ConfigMap ${namespace}/${snapshotName}`);
  const recipe = parseRecipe(recipeText, `ConfigMap ${namespace}/${recipeName}`);
  if (entry.isolated) return runIsolatedCheck(entry, { client, env, signal, recipe, snapshot, ...io });
  switch (entry.name) {
    case "operator-health": {
      const policies = await client.list<ClusterPolicy>("nvidia.com/v1", "ClusterPolicy");
      return operatorHealth(policies.items, await pods(client));
    }
    case "expected-resources": {
      const nodes = await client.list<Json<V1Node>>("v1", "Node");
      return expectedResources(nodes.items, snapshot);
    }
    default:
      return gpuOperatorVersion(phaseConstraint(recipe, entry.phase, VERSION_CONSTRAINT), await pods(client));
  }
}

/**
 * check-nvidia-smi in its pod on one GPU node: nvidia-smi's count against the node's own
 * nvidia.com/gpu capacity (get nodes/<its node>, which the validator ClusterRole already grants).
 */
async function checkNvidiaSmi(
  client: KubeClient,
  env: Readonly<Record<string, string | undefined>>,
  signal: AbortSignal,
): Promise<Verdict> {
  const nodeName = required(env, VALIDATOR_ENV.nodeName);
  const [node, smi] = await Promise.all([
    client.get<Json<V1Node>>({ apiVersion: "v1", kind: "Node", name: nodeName }),
    readNvidiaSmi(env, signal),
  ]);
  return nvidiaSmiVerdict(nodeName, node, smi);
}

/** Prints the verdict, leaves the termination message, and turns it into the container's exit code. */
export function finishVerdict(verdict: Verdict, writeStdout: (t: string) => void): void {
  for (const line of verdict.details) writeStdout(`${line}\n`);
  writeStdout(`${verdict.status}: ${verdict.message}\n`);
  // A skip leaves no termination message, as the original's; its reason is the verdict line.
  if (verdict.status !== "skipped") writeTerminationMessage(verdict.message);
  // The container's exit code is the verdict: 0 passed, 1 failed, 2 skipped.
  if (verdict.status === "failed") throw new ExitStatus(1, `check failed: ${verdict.message}`);
  if (verdict.status === "skipped") throw new ExitStatus(2, `check skipped: ${verdict.message}`);
}

/** The kubelet creates this file in a real pod; elsewhere there is nothing to write to. Never through a link. */
function writeTerminationMessage(message: string): void {
  if (!existsSync(TERMINATION_LOG)) return;
  try {
    const fd = openSync(TERMINATION_LOG, constants.O_WRONLY | constants.O_TRUNC | constants.O_NOFOLLOW);
    try {
      writeSync(fd, message);
    } finally {
      closeSync(fd);
    }
  } catch {
    // The message is also the last stdout line, which the remote side falls back to.
  }
}
