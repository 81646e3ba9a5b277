import { afterEach, expect, test } from "bun:test";
import { join } from "node:path";
import { startControllers } from "./index.ts";
import { processRuntime } from "./process-runtime.ts";
import { condition, events, jobSpec, R, testStore, waitFor } from "./testing.ts";

let stop = async () => {};
afterEach(() => stop());

test("a Job of a real process: scheduled, run, completed, logged; Foreground delete takes its pod first", async () => {
  const { store } = testStore();
  const runtime = processRuntime({
    images: { "aicr:1": join(import.meta.dir, "fixtures", "fake-aicr.sh") },
    kubeconfigForServiceAccount: async (ns, sa) => `# token for ${ns}/${sa}`,
  });
  const c = startControllers(store, { runtime });
  stop = () => c.stop();
  store.create(R.sa, { metadata: { name: "aicr-run", namespace: "ns" } });
  const env = [{ name: "NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } }];
  const job = store.create(
    R.jobs,
    jobSpec(
      "aicr-run",
      {},
      {
        serviceAccountName: "aicr-run",
        containers: [{ name: "aicr", image: "aicr:1", command: ["aicr", "snapshot"], env }],
      },
    ),
  );
  const done = await waitFor(
    store,
    () => {
      const j = store.find(R.jobs, "ns", "aicr-run");
      return condition(j, "Complete")?.status === "True" && j;
    },
    "Complete",
  );
  expect(done.status.succeeded).toBe(1);
  const [pod] = store.list(R.pods, {
    namespace: "ns",
    labelSelector: `batch.kubernetes.io/controller-uid=${job.metadata.uid}`,
  }).items;
  const found = c.logs.get("ns", pod!.metadata.name!);
  if (!("log" in found)) throw new Error(found.error.message);
  expect(found.log.text()).toContain("argv: snapshot\n");
  expect(found.log.text()).toContain("node=node-1 ");
  expect(found.log.text()).toContain("kubeconfig: # token for ns/aicr-run\n");
  expect(events(store, pod!.metadata.name!).map((e) => e.reason)).toEqual([
    "Scheduled",
    "Pulled",
    "Created",
    "Started",
  ]);

  store.delete(R.jobs, "ns", "aicr-run", {
    propagationPolicy: "Foreground",
    preconditions: { uid: job.metadata.uid! },
  });
  await waitFor(
    store,
    () => !store.find(R.jobs, "ns", "aicr-run") && !store.find(R.pods, "ns", pod!.metadata.name!),
    "gone",
  );
});
