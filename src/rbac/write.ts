import { writeNewDirectory } from "../core/files.ts";
import type { Logger } from "../core/log.ts";
import { renderAgentRbac } from "./_render.ts";

export interface WriteAgentRbacOptions {
  namespace: string;
  serviceAccount: string;
  discoverNetwork: boolean;
  runId: string;
  /** Parent of snapshot-rbac-<run-id>/. */
  dir: string;
  json: boolean;
  log: Logger;
  writeStdout: (text: string) => void;
}

/** Renders (pure), writes a brand-new directory, and tells the operator what to do next. Applies nothing. */
export async function writeAgentRbac(o: WriteAgentRbacOptions): Promise<void> {
  const rendered = renderAgentRbac(o);
  const path = await writeNewDirectory(o.dir, rendered.directory, { files: rendered.files });
  const subject = `system:serviceaccount:${o.namespace}:${o.serviceAccount}`;
  o.log.info(`wrote ${path}/ — NOTHING has been applied to any cluster`);
  for (const f of rendered.files) {
    o.log.info(
      `  ${f.file}  ${f.kind}/${f.name}${f.namespace ? ` (namespace ${f.namespace})` : " (cluster-scoped)"}`,
    );
  }
  o.log.info(`review, then grant:  kubectl apply -f ${path}/`);
  o.log.info(`revoke later:        kubectl delete -f ${path}/`);
  o.log.info(`check the grant:     kubectl auth can-i --list --as ${subject} -n ${o.namespace}`);
  o.log.info(
    "trade-off: every run using this ServiceAccount shares these grants, so runs are not permission-isolated from each other",
  );
  if (o.discoverNetwork)
    o.log.info(
      "--discover-network: the ClusterRole also reads NicDevice and NicClusterPolicy objects (read-only)",
    );
  if (!o.json) return;
  const summary = {
    directory: path,
    runId: o.runId,
    namespace: o.namespace,
    serviceAccount: o.serviceAccount,
    discoverNetwork: o.discoverNetwork,
    objects: rendered.files.map((f) => ({
      file: `${path}/${f.file}`,
      kind: f.kind,
      name: f.name,
      ...(f.namespace ? { namespace: f.namespace } : {}),
    })),
    apply: `kubectl apply -f ${path}/`,
    delete: `kubectl delete -f ${path}/`,
  };
  o.writeStdout(`${JSON.stringify(summary, null, 2)}\n`);
}
