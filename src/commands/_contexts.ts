/**
 * Several kubeconfig contexts in one `aicr snapshot` (remote mode): `--context` repeated, or
 * `--all-contexts`. Every check — the contexts, each one's namespace and options, the output
 * directory and each context's file — is made before the first request to any cluster; then
 * remote/contexts.ts runs one full snapshot per context at once, and a summary table follows.
 */
import { existsSync, statSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { AicrError } from "../core/errors.ts";
import { checkFileDestination, writeFileAtomic } from "../core/files.ts";
import type { Logger } from "../core/log.ts";
import { nearest } from "../core/suggest.ts";
import type { KubeClient } from "../kube/client.ts";
import { type KubeContextEntry, listContexts } from "../kube/config.ts";
import { placementMismatch } from "../remote/auto-target.ts";
import { collectSnapshot } from "../remote/collect-snapshot.ts";
import {
  contextFileNames,
  contextsFailure,
  renderContextsTable,
  runPerContext,
  summaryRows,
} from "../remote/contexts.ts";
import { collectFleet, fleetFailure } from "../remote/fleet.ts";
import { writeFleetDir } from "../remote/fleet-output.ts";
import type { RunContext } from "../run/context.ts";
import { type Destination, parseDestination } from "../snapshot/deliver.ts";
import { renderSnapshot } from "../snapshot/render.ts";
import { createTransport } from "../transport/registry.ts";
import { resolveNamespace } from "./_args.ts";
import type { FlagSpecs } from "./_flag-spec.ts";
import { checkFleetDir, type FleetFlags } from "./_fleet-flags.ts";
import type { ResolvedSnapshotFlags } from "./_snapshot-flags.ts";

/** `--all-contexts`, declared by the commands that take several contexts (aicr snapshot). */
export const contextsArgs = {
  "all-contexts": {
    type: "boolean",
    description:
      "Snapshot every context of the kubeconfig at once (as several --context); needs -o <dir>/: one file per context",
  },
} as const satisfies FlagSpecs;

const invalid = (message: string, remedy: string, context: Record<string, unknown>): AicrError =>
  new AicrError("INVALID_REQUEST", message, { remedy, context });

export interface ContextsSource {
  kubeconfig?: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  /** The transport is remote (not --local, not --add-roles-to-service-account). */
  remote: boolean;
}

/**
 * The contexts of a multi-cluster run, or undefined for an ordinary one (at most one --context and
 * no --all-contexts: nothing is read here then). Offline: the kubeconfig file alone. Unknown names,
 * duplicates, --all-contexts with --context, or several contexts outside remote mode: INVALID_REQUEST.
 */
export function selectContexts(
  given: { names: readonly string[]; all: boolean },
  source: ContextsSource,
): KubeContextEntry[] | undefined {
  const { names, all } = given;
  if (!all && names.length <= 1) return undefined;
  if (all && names.length > 0)
    throw invalid(
      "--all-contexts and --context cannot be combined",
      "pass --all-contexts for every context of the kubeconfig, or name each with --context",
      { field: "--all-contexts" },
    );
  const flag = all ? "--all-contexts" : "--context";
  if (!source.remote)
    throw invalid(
      `${flag} with several contexts is for a remote snapshot (through the agent Job), not --local or --add-roles-to-service-account`,
      "leave out --local / --add-roles-to-service-account, or pass one --context",
      { field: flag },
    );
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined)
    throw invalid(`--context ${JSON.stringify(twice)} is given twice`, "name each context once", {
      field: "--context",
      value: twice,
    });
  const list = listContexts({ kubeconfig: source.kubeconfig, env: source.env });
  if (all) {
    if (list.contexts.length === 0)
      throw invalid(`the ${list.origin} has no contexts`, "add a context (kubectl config set-context)", {
        field: "--all-contexts",
      });
    return list.contexts;
  }
  const known = list.contexts.map((c) => c.name);
  return names.map((name) => {
    const entry = list.contexts.find((c) => c.name === name);
    if (entry) return entry;
    const guess = nearest(name, known);
    throw invalid(
      `context ${JSON.stringify(name)} is not in the ${list.origin}${guess ? `: did you mean ${JSON.stringify(guess)}?` : ""}`,
      `use one of: ${known.join(", ") || "(none)"} (kubectl config get-contexts)`,
      { field: "--context", value: name },
    );
  });
}

/** The file extension of the shown form: yaml, json, or txt for a table or a template. */
const extensionOf = (o: ResolvedSnapshotFlags): string => {
  const kind = o.presentation?.kind ?? o.format;
  return kind === "json" ? "json" : kind === "yaml" ? "yaml" : "txt";
};

/**
 * -o for several contexts: a directory, written `<dir>/` or already one; its parent must exist.
 * stdout and cm:// are refused (one document per context needs one file per context).
 */
function outputDirectory(dest: Destination): { dir: string; exists: boolean } {
  const remedy = "pass -o <dir>/: each context's snapshot is written to <dir>/<context>.yaml";
  if (dest.kind === "stdout")
    throw invalid("several contexts need an output directory: stdout takes one snapshot", remedy, {
      field: "--output",
    });
  if (dest.kind === "configmap")
    throw invalid(
      `-o cm://${dest.ref.namespace}/${dest.ref.name} takes one snapshot: several contexts need an output directory`,
      remedy,
      { field: "--output", value: `cm://${dest.ref.namespace}/${dest.ref.name}` },
    );
  const path = dest.path;
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat?.isDirectory()) return { dir: path, exists: true };
  if (stat)
    throw invalid(`invalid --output ${JSON.stringify(path)}: it is a file, not a directory`, remedy, {
      field: "--output",
      value: path,
    });
  if (!path.endsWith("/"))
    throw invalid(
      `invalid --output ${JSON.stringify(path)}: several contexts need a directory`,
      `write -o ${path}/ (a trailing slash: the directory is created) or name an existing directory`,
      { field: "--output", value: path },
    );
  const parent = dirname(path.replace(/\/+$/, "")) || ".";
  if (!existsSync(parent) || !statSync(parent).isDirectory())
    throw invalid(
      `invalid --output ${JSON.stringify(path)}: its parent ${JSON.stringify(parent)} is not an existing directory`,
      "create the parent directory first, or choose another -o <dir>/",
      { field: "--output", value: path },
    );
  return { dir: path, exists: false };
}

/**
 * aicr snapshot against several contexts: every input checked first (exit 2, nothing sent), then one
 * collectSnapshot per context at once with this invocation's run ID, each result written as it
 * arrives, then the summary (a table, or one JSON log line). Throws contextsFailure's verdict.
 */
export async function runSnapshotContexts(
  ctx: RunContext,
  contexts: readonly KubeContextEntry[],
  flags: { kubeconfig?: string | undefined; namespace?: string | undefined; output?: string | undefined },
  resolve: (namespace: string) => ResolvedSnapshotFlags,
  fleetOf: (o: ResolvedSnapshotFlags) => FleetFlags | undefined = () => undefined,
): Promise<void> {
  // The output first: stdout and cm:// are refused for several contexts whatever else is wrong.
  const { dir, exists } = outputDirectory(parseDestination(flags.output));
  const options = new Map(
    contexts.map((c) => {
      const ns = resolveNamespace(flags.namespace, ctx.env, {
        kubeconfig: flags.kubeconfig,
        context: c.name,
      });
      return [c.name, resolve(ns)] as const;
    }),
  );
  const first = options.get(contexts[0]?.name ?? "");
  if (!first) throw new Error("a multi-context run has at least one context");
  // --all-nodes in each cluster: a directory per context (<dir>/<context>/), each a fleet's output.
  const fleet = fleetOf(first);
  const files = contextFileNames(
    contexts.map((c) => c.name),
    fleet ? "d" : extensionOf(first),
  );
  const pathOf = (name: string): string => {
    const file = files.get(name) ?? "";
    return join(dir, fleet ? file.slice(0, -".d".length) : file);
  };
  if (exists)
    for (const c of contexts)
      if (fleet) checkFleetDir(`${pathOf(c.name)}/`);
      else checkFileDestination(pathOf(c.name), "--output");
  if (!exists) await mkdir(dir);
  const outcomes = await runPerContext(
    contexts,
    async (client, name, log) => {
      const o = options.get(name);
      if (!o) throw new Error(`no options for context ${name}`);
      if (fleet) return fleetInContext(ctx, o, fleet, { client, log, dir: pathOf(name) });
      const result = await collectSnapshot({
        ...o,
        client,
        log,
        signal: ctx.signal,
        runId: ctx.runId,
        invocationId: ctx.invocationId,
        statusLine: false,
        checkRunId: ctx.runIdGiven,
      });
      if (placementMismatch(result.document))
        log.warn("snapshot has no GPU data but cluster topology shows GPU-capable nodes", {
          fix: "pass --node-selector nvidia.com/gpu.present=true, --require-gpu (needs the device plugin), or --runtime-class nvidia",
        });
      const bytes = o.presentation ? renderSnapshot(result.document, o.presentation) : result.content;
      const path = pathOf(name);
      await writeFileAtomic(path, bytes, { flag: "--output" });
      log.info(`snapshot written to ${path}`);
      return path;
    },
    {
      log: ctx.log,
      signal: ctx.signal,
      connect: async (name) => {
        const transport = createTransport("remote", {
          kubeconfig: flags.kubeconfig,
          context: name,
          env: ctx.env,
          log: ctx.log,
        });
        const client = await transport.connect();
        if (!client) throw new Error("the remote transport always yields a client");
        return client;
      },
    },
  );
  const rows = summaryRows(outcomes, (path) => path);
  if (ctx.logJson) ctx.log.info("contexts summary", { contexts: rows });
  else ctx.log.info(renderContextsTable(rows));
  const failure = contextsFailure(outcomes, ctx.signal);
  if (failure !== undefined) throw failure;
}

/** One context's fleet: the whole --all-nodes run in that cluster, written to <dir>/<context>/. */
async function fleetInContext(
  ctx: RunContext,
  o: ResolvedSnapshotFlags,
  fleet: FleetFlags,
  at: { client: KubeClient; log: Logger; dir: string },
): Promise<string> {
  const { destination: _, presentation: __, format, ...rest } = o;
  const result = await collectFleet({
    ...rest,
    client: at.client,
    log: at.log,
    signal: ctx.signal,
    runId: ctx.runId,
    invocationId: ctx.invocationId,
    checkRunId: ctx.runIdGiven,
    statusLine: false,
    parallelism: fleet.parallelism,
    maxNodes: fleet.maxNodes,
    sample: fleet.sample,
    nodeTimeoutMs: fleet.nodeTimeoutMs,
    format,
  });
  const n = await writeFleetDir(at.dir, result.nodes, result.report, format);
  at.log.info(`fleet: ${n} node snapshot(s) and fleet.json written to ${at.dir}/`);
  const failure = fleetFailure(result.report);
  if (failure) throw failure;
  return `${at.dir}/`;
}
