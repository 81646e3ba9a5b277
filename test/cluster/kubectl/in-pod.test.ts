/** A pod's process talks back to the apiserver as the pod's ServiceAccount (the kubelet's process runtime). */
import { describe, expect, test } from "bun:test";
import { useCluster } from "../../support/cluster.ts";
import { processRuntime } from "../controllers/process-runtime.ts";
import { node } from "../nodes.ts";
import { resource } from "../resources.ts";
import { BACKENDS } from "../testbed.ts";
import { KUBECTL, kubectl } from "./kubectl.ts";

for (const backend of BACKENDS)
  describe(`[${backend}] kubectl inside a pod`, () => {
    const cluster = useCluster(backend, {
      https: true,
      nodes: [node("node-1")],
      runtime: (apiserver) =>
        processRuntime({
          images: { "kubectl:1": KUBECTL },
          kubeconfigForServiceAccount: apiserver.kubeconfigForServiceAccount,
        }),
    });

    test("authenticates as system:serviceaccount:<ns>:<sa> and is authorized by RBAC", async () => {
      await cluster().store.create(resource("serviceaccounts"), {
        metadata: { name: "agent", namespace: "default" },
      });
      const finished = new Promise<string>((resolve) => {
        const stop = cluster().store.subscribe((e) => {
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
      await cluster().store.create(resource("jobs"), {
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
      // `kubectl auth can-i` exits 1 for "no": the Job fails, and its log holds the answer.
      expect(await finished).toBe("Failed");
      const pod = cluster().store.list(resource("pods"), {
        namespace: "default",
        labelSelector: "job-name=probe",
      }).items[0]!;
      const log = await kubectl(cluster().kubeconfigFor("admin"), ["logs", pod.metadata.name!, "-c", "main"]);
      expect(log).toMatchObject({ code: 0, stdout: "no\n" });
      const review = cluster()
        .log.requestsOn("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
        .at(-1);
      expect(review?.user).toBe("system:serviceaccount:default:agent");
    }, 60_000);
  });
