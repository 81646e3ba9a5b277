import { AicrError } from "../core/errors.ts";
import type { KubeClient } from "../kube/client.ts";
import { isNotFound } from "../kube/errors.ts";

/** A named RuntimeClass must exist before the Job is created: a pod naming a missing one is never admitted. */
export async function checkRuntimeClass(client: KubeClient, name: string): Promise<void> {
  try {
    await client.get({ apiVersion: "node.k8s.io/v1", kind: "RuntimeClass", name });
  } catch (err) {
    if (!isNotFound(err)) throw err;
    throw new AicrError("NOT_FOUND", `RuntimeClass ${JSON.stringify(name)} does not exist in this cluster`, {
      remedy:
        "the GPU Operator may not be installed yet: omit --runtime-class and target GPU nodes with --node-selector",
      cause: err,
    });
  }
}
