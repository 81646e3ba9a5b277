import { accessSync, constants, realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { AicrError } from "../core/errors.ts";
import { writeNewDirectory } from "../core/files.ts";
import type { Logger } from "../core/log.ts";
import { renderAgentRbac } from "./_render.ts";

/** Filesystems of the kernel's own making: nothing aicr writes belongs there. */
const PSEUDO_FS_ROOTS = ["/proc", "/sys"];
const underPseudoFs = (path: string): string | undefined =>
  PSEUDO_FS_ROOTS.find((root) => path === root || path.startsWith(`${root}/`));

/**
 * `--dir` checked before anything is written: an existing directory, not under /proc or /sys (its
 * real path included), that this user may write into. Each failure is INVALID_REQUEST (exit 2)
 * naming the value, what is wrong and the remedy.
 */
export function checkRbacDir(dir: string, flag = "--dir"): void {
  const fail = (what: string, remedy: string, cause?: unknown): never => {
    throw new AicrError("INVALID_REQUEST", `invalid ${flag} ${JSON.stringify(dir)}: ${what}`, {
      remedy,
      context: { field: flag, value: dir },
      cause,
    });
  };
  const pseudo = `choose a directory on a regular filesystem for ${flag}`;
  const abs = resolve(dir);
  const lexical = underPseudoFs(abs);
  if (lexical) fail(`it is under ${lexical}, a kernel pseudo-filesystem`, pseudo);
  const code = (err: unknown) => (err as NodeJS.ErrnoException).code;
  try {
    if (!statSync(abs).isDirectory())
      fail("it is not a directory", `pass an existing directory with ${flag} (default: .)`);
  } catch (err) {
    if (err instanceof AicrError) throw err;
    if (code(err) === "ENOENT" || code(err) === "ENOTDIR")
      fail(
        "no such directory",
        `create it first (mkdir -p ${JSON.stringify(dir)}) or pass an existing directory with ${flag}`,
      );
    fail(
      `it cannot be read (${code(err) ?? String(err)})`,
      `check its permissions, or pass another directory with ${flag}`,
      err,
    );
  }
  let real = abs;
  try {
    real = realpathSync(abs);
  } catch {}
  const linked = underPseudoFs(real);
  if (linked)
    fail(`it resolves to ${JSON.stringify(real)}, under ${linked}, a kernel pseudo-filesystem`, pseudo);
  try {
    accessSync(abs, constants.W_OK | constants.X_OK);
  } catch (err) {
    if (code(err) === "EROFS")
      fail("it is on a read-only filesystem", `choose a directory on a writable filesystem for ${flag}`);
    fail(
      "this user may not write into it",
      `fix the directory's permissions (or run as a user who may write there), or choose another ${flag}`,
      err,
    );
  }
}

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
  checkRbacDir(o.dir);
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
