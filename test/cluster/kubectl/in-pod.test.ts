/** A pod's process talks back to the fake as the pod's ServiceAccount (kubelet process runtime). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { kubeletLogs } from "../controllers/logs.ts";
import { processRuntime } from "../controllers/process-runtime.ts";
import { node } from "../nodes.ts";
import { resource } from "../resources.ts";
import { type Cluster, startCluster } from "../server.ts";
import { KUBECTL } from "./kubectl.ts";

let cluster: Cluster;

describe.skipIf(!KUBECTL)("kubectl inside a pod", () => {
  beforeAll(async () => {
    cluster = await startCluster({
      https: true,
      objects: [{ resource: "nodes", object: node("node-1") }],
      controllers: {
        runtimeFactory: (apiserver) =>
          processRuntime({
            images: { "kubectl:1": KUBECTL! },
            kubeconfigForServiceAccount: apiserver.kubeconfigForServiceAccount,
          }),
      },
    });
  });
  afterAll(() => cluster.stop());

  test("authenticates as system:serviceaccount:<ns>:<sa> and is authorized by RBAC", async () => {
    cluster.store.create(resource("serviceaccounts"), { metadata: { name: "agent", namespace: "default" } });
    cluster.store.create(resource("jobs"), {
      metadata: { name: "probe", namespace: "default" },
      spec: {
        backoffLimit: 0,
        template: {
          spec: {
            serviceAccountName: "agent",
            restartPolicy: "Never",
            containers: [
              {
                name: "main",
                image: "kubectl:1",
                command: ["kubectl"],
                args: ["auth", "can-i", "list", "pods"],
              },
            ],
          },
        },
      },
    });
    const finished = await new Promise<string>((resolve) => {
      const stop = cluster.store.subscribe((e) => {
        if (e.resource.plural !== "jobs" || e.object.metadata.name !== "probe") return;
        const done = (e.object.status?.conditions ?? []).find(
          (c: { type: string; status: string }) =>
            (c.type === "Complete" || c.type === "Failed") && c.status === "True",
        );
        if (!done) return;
        stop();
        resolve(done.type);
      });
    });
    // `kubectl auth can-i` exits 1 for "no": the Job fails, and its log holds the answer.
    expect(finished).toBe("Failed");
    const pod = cluster.store.list(resource("pods"), { labelSelector: "job-name=probe" }).items[0]!;
    const found = kubeletLogs(cluster.store).get("default", pod.metadata.name!, "main");
    expect("log" in found && found.log.text()).toBe("no\n");
    const review = cluster.log.requestsOn("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews").at(-1);
    expect(review?.user).toBe("system:serviceaccount:default:agent");
  });
});
