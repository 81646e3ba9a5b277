import { AicrError } from "../core/errors.ts";
import { inPodWithoutKubeconfig } from "../kube/config.ts";
import { writeAgentRbac } from "../rbac/write.ts";
import { placementMismatch } from "../remote/auto-target.ts";
import { collectSnapshot } from "../remote/collect-snapshot.ts";
import { checkDestination, describeDestination } from "../snapshot/deliver.ts";
import { renderSnapshot } from "../snapshot/render.ts";
import { resolveNamespace } from "./_args.ts";
import { flagBoolean, flagValues } from "./_argv.ts";
import { contextsArgs, runSnapshotContexts, selectContexts } from "./_contexts.ts";
import { defineAicrCommand } from "./_define.ts";
import { fleetArgs, resolveFleetFlags, runFleetSnapshot } from "./_fleet-flags.ts";
import { nodeArgs, providerArgs, runNodeSnapshot } from "./_node.ts";
import { parseBool } from "./_parse.ts";
import { resolveSnapshotOptions } from "./_snapshot-flags.ts";

const writeStdout = (text: string): void => void process.stdout.write(text);

/**
 * aicr snapshot — from a jump host: deploy the run-isolated agent Job and return its node's snapshot.
 * With --local: collect the node this process runs on. (In the agent's pod, AICR_AGENT_MODE=true
 * routes `aicr snapshot` to the internal agent command: commands/agent.ts.)
 */
export default defineAicrCommand({
  name: "snapshot",
  description: "Capture a GPU node's configuration through a run-isolated agent Job (--local: this host)",
  examples: [
    "aicr snapshot -n gpu-operator -o node.yaml",
    "aicr snapshot -n gpu-operator -o cm://gpu-operator/aicr-snapshot",
    "aicr snapshot --local -t json",
    "aicr snapshot -n gpu-operator -t table",
    "aicr snapshot -n gpu-operator --template gpu.tmpl",
    "aicr snapshot -n gpu-operator --gke-gpu-pools pools.json --require-gpu",
  ],
  config: true,
  severalContexts: true,
  transport: (args) => (args["add-roles-to-service-account"] ? "offline" : args.local ? "local" : "remote"),
  args: {
    ...nodeArgs,
    ...fleetArgs,
    local: {
      type: "boolean",
      description:
        "Collect this host instead of deploying the agent; K8s readings only from a cluster named with --kubeconfig or --context",
    },
    image: {
      type: "string",
      description: "Agent image (default $AICR_IMAGE, then the image this build deploys: see 'aicr version')",
      valueHint: "ref",
    },
    "image-pull-secret": {
      type: "string",
      description: "Secret for pulling the image (repeatable)",
      valueHint: "name",
    },
    "job-name": {
      type: "string",
      description: "Job name prefix; the run ID is appended (default aicr)",
      valueHint: "prefix",
    },
    "service-account-name": {
      type: "string",
      description: "Run as this existing ServiceAccount (no RBAC created); if none exists, a name prefix",
      valueHint: "name",
    },
    "add-roles-to-service-account": {
      type: "string",
      description:
        "Only write the RBAC manifests for this existing ServiceAccount (as aicr render-rbac) and exit",
      valueHint: "name",
    },
    "node-selector": {
      type: "string",
      description: "key=value (repeatable); default: GPU nodes when the cluster labels any",
      valueHint: "k=v",
    },
    toleration: {
      type: "string",
      description: "key=value:effect or key:effect (repeatable); default: tolerate every taint",
      valueHint: "t",
    },
    timeout: {
      type: "string",
      description: "How long to wait for the agent (default 5m)",
      valueHint: "duration",
    },
    // citty parses `--no-<flag>` as the negation of `<flag>`: a flag named "no-cleanup" would never be set.
    cleanup: {
      type: "boolean",
      default: true,
      description: "Delete the run's objects when it ends (default)",
      negativeDescription: "Keep the run's Job, RBAC and staging ConfigMap (they are listed)",
    },
    privileged: {
      type: "boolean",
      default: true,
      description: "Privileged agent pod (needed for GPU and SystemD readings)",
      negativeDescription:
        "Unprivileged agent pod, for a Pod Security restricted namespace (no GPU or SystemD readings)",
    },
    "require-gpu": {
      type: "boolean",
      description:
        "Fail (exit 3, nothing delivered) when the node reports no GPU; the agent also requests one nvidia.com/gpu (not with --runtime-class)",
    },
    template: {
      type: "string",
      description:
        "Render the snapshot through this template file (a Go-template subset: see the README); needs -t yaml, not with cm://",
      valueHint: "file",
    },
    ...providerArgs,
    ...contextsArgs,
    "cluster-config": {
      type: "string",
      description: "--local only: an l8k cluster-config.yaml for the NetworkTopology readings",
      valueHint: "file",
    },
    "runtime-class": {
      type: "string",
      description: "runtimeClassName for the agent pod (e.g. nvidia)",
      valueHint: "name",
    },
    os: {
      type: "string",
      description:
        "Node OS family: ubuntu, rhel, cos, amazonlinux, ol, talos (talos: no host systemd mounts; SystemD read from the Node object)",
      valueHint: "family",
    },
    requests: { type: "string", description: "Agent resource requests, name=quantity,…", valueHint: "list" },
    limits: { type: "string", description: "Agent resource limits, name=quantity,…", valueHint: "list" },
    "discover-network": {
      type: "boolean",
      description:
        "Add the NetworkTopology measurement (NICs, GPU↔NIC affinity); the run gains two read-only rules",
    },
    overwrite: {
      type: "boolean",
      description: "Write into an existing cm:// ConfigMap that aicr did not write (default: refused)",
    },
  },
  async run(ctx, args, { rawArgs }) {
    const namespace = resolveNamespace(args.namespace, ctx.env, args);
    // Several --context, or --all-contexts: commands/_contexts.ts (undefined, with nothing read, otherwise).
    const remote = ctx.transport.name === "remote";
    if (remote && inPodWithoutKubeconfig({ kubeconfig: args.kubeconfig, env: ctx.env }))
      throw new AicrError(
        "INVALID_REQUEST",
        "aicr snapshot runs inside a pod without AICR_AGENT_MODE=true and without a kubeconfig: it would deploy another agent Job from here",
        {
          remedy:
            "to collect this node from the pod, set AICR_AGENT_MODE=true in the container's env (aicr's own agent Job does); to deploy an agent Job from inside the cluster, pass --kubeconfig <path>",
        },
      );
    const contexts = selectContexts(rawArgs, { kubeconfig: args.kubeconfig, env: ctx.env, remote });
    const addRolesFor = args["add-roles-to-service-account"];
    if (addRolesFor !== undefined) {
      return writeAgentRbac({
        namespace,
        serviceAccount: addRolesFor,
        discoverNetwork: Boolean(args["discover-network"]),
        runId: ctx.runId,
        dir: ".",
        json: false,
        log: ctx.log,
        writeStdout,
      });
    }
    // --local: this host; K8s readings only from a cluster asked for (transport/_local.ts).
    const extras = {
      template: args.template,
      okeAddons: args["oke-addons"],
      aksGpuPools: args["aks-gpu-pools"],
      gkeGpuPools: args["gke-gpu-pools"],
    };
    if (ctx.transport.name === "local")
      return runNodeSnapshot(ctx, args, writeStdout, {
        ...extras,
        requireGpu: flagBoolean(rawArgs, "require-gpu"),
        os: args.os,
        clusterConfig: args["cluster-config"],
        discoverNetwork: flagBoolean(rawArgs, "discover-network"),
      });
    const snapshotOptions = (ns: string) =>
      resolveSnapshotOptions(
        {
          ...extras,
          clusterConfig: args["cluster-config"],
          namespace: ns,
          output: args.output,
          format: args.format,
          image: args.image,
          imagePullSecrets: flagValues(rawArgs, "image-pull-secret"),
          jobName: args["job-name"],
          serviceAccountName: args["service-account-name"],
          nodeSelectors: flagValues(rawArgs, "node-selector"),
          tolerations: flagValues(rawArgs, "toleration"),
          timeout: args.timeout,
          noCleanup: !parseBool("--cleanup", flagBoolean(rawArgs, "cleanup"), true),
          privileged: flagBoolean(rawArgs, "privileged"),
          requireGpu: flagBoolean(rawArgs, "require-gpu"),
          runtimeClass: args["runtime-class"],
          os: args.os,
          requests: args.requests,
          limits: args.limits,
          discoverNetwork: flagBoolean(rawArgs, "discover-network"),
          overwrite: flagBoolean(rawArgs, "overwrite"),
          maxNodesPerEntry: args["max-nodes-per-entry"],
          debug: args.debug,
        },
        ctx.env,
      );
    // --all-nodes: one run over every target node (commands/_fleet-flags.ts), checked before any request.
    const fleetOf = (o: ReturnType<typeof snapshotOptions>) =>
      resolveFleetFlags({
        allNodes: parseBool("--all-nodes", flagBoolean(rawArgs, "all-nodes"), false),
        parallelism: args.parallelism,
        maxNodes: args["max-nodes"],
        sample: args.sample,
        output: args.output,
        destination: o.destination,
        presentation: o.presentation,
      });
    if (contexts) return runSnapshotContexts(ctx, contexts, args, snapshotOptions, fleetOf);
    const options = snapshotOptions(namespace);
    const fleet = fleetOf(options);
    if (fleet) return runFleetSnapshot(ctx, options, fleet, writeStdout);
    // The -o file is checked before the first request: a run is never collected only to be lost.
    checkDestination(options.destination);
    const client = await ctx.transport.connect();
    if (!client) throw new Error("the remote transport always yields a client");
    const dest = options.destination;
    const result = await collectSnapshot({
      ...options,
      client,
      log: ctx.log,
      signal: ctx.signal,
      runId: ctx.runId,
      invocationId: ctx.invocationId,
      statusLine: !ctx.logJson,
      checkRunId: ctx.runIdGiven,
      delivered: dest.kind === "configmap" ? dest.ref : undefined,
    });
    const doc = result.document;
    if (placementMismatch(doc)) {
      ctx.log.warn("snapshot has no GPU data but cluster topology shows GPU-capable nodes", {
        fix: "pass --node-selector nvidia.com/gpu.present=true, --require-gpu (needs the device plugin), or --runtime-class nvidia",
      });
    }
    if (dest.kind === "configmap") {
      ctx.log.info(`snapshot delivered to ${describeDestination(dest)} (kept: it is yours)`);
      return;
    }
    // YAML as the agent wrote it (re-serialized only when provider readings were merged in).
    const bytes = options.presentation ? renderSnapshot(doc, options.presentation) : result.content;
    if (dest.kind === "stdout") writeStdout(bytes);
    else {
      const { writeFileAtomic } = await import("../core/files.ts");
      await writeFileAtomic(dest.path, bytes, { flag: "--output" });
      ctx.log.info(`snapshot written to ${dest.path}`);
    }
  },
});
