import { addPodImages, flattenSpec, nodeReadings } from "./_k8s-parse.ts";
import { type ClusterReader, forEachPage } from "./_k8s-source.ts";
import { type CollectorOptions, errorText, type Measurement, type Readings } from "./_types.ts";

export interface K8sCollectorOptions extends CollectorOptions {
  cluster: ClusterReader;
  nodeName: string;
}

type SubtypeReader = (options: K8sCollectorOptions) => Promise<Readings>;

const readServer: SubtypeReader = async ({ cluster, signal }) => {
  const info = await cluster.serverVersion({ signal });
  const out: Readings = { version: info.gitVersion };
  if (info.platform) out.platform = info.platform;
  if (info.goVersion) out.goVersion = info.goVersion;
  return out;
};

const readImages: SubtypeReader = async ({ cluster, signal }) => {
  const images: Readings = {};
  await forEachPage((page) => cluster.listPodsPage(page), {
    signal,
    onItems: (pods) => addPodImages(pods, images),
  });
  return images;
};

const readPolicies: SubtypeReader = async ({ cluster, signal }) => {
  const out: Readings = {};
  for (const policy of await cluster.listClusterPolicies({ signal })) {
    if (policy.spec) flattenSpec(policy.spec, "", out);
  }
  return out;
};

const readNode: SubtypeReader = async ({ cluster, signal, nodeName }) =>
  nodeReadings(nodeName, await cluster.getNode(nodeName, { signal }));

const SUBTYPES: readonly [string, SubtypeReader][] = [
  ["server", readServer],
  ["image", readImages],
  ["policy", readPolicies],
  ["node", readNode],
];

/**
 * K8s: server, image, policy, node, read concurrently. A subtype the agent may not read (say, a
 * Forbidden list) is logged and left out so the rest still arrive; when every subtype fails the
 * collector fails, and is left out of the snapshot by the caller.
 */
export async function collectK8s(options: K8sCollectorOptions): Promise<Measurement> {
  const failures: string[] = [];
  const results = await Promise.all(
    SUBTYPES.map(async ([subtype, read]) => {
      try {
        return { subtype, data: await read(options) };
      } catch (err) {
        if (options.signal.aborted) throw err;
        failures.push(`${subtype}: ${errorText(err)}`);
        options.log.warn("K8s subtype could not be read; left out", { subtype, cause: errorText(err) });
        return undefined;
      }
    }),
  );
  const subtypes = results.filter((s) => s !== undefined);
  if (subtypes.length === 0) throw new Error(`no K8s subtype could be read (${failures.join("; ")})`);
  return { type: "K8s", subtypes };
}
