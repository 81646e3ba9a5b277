import { AicrError } from "../core/errors.ts";
import { checkOutputsApart } from "../core/files.ts";
import { inPodWithoutKubeconfig } from "../kube/config.ts";
import { writeAgentRbac } from "../rbac/write.ts";
import { placementMismatch } from "../remote/auto-target.ts";
import { collectSnapshot } from "../remote/collect-snapshot.ts";
import { checkDestination, describeDestination, parseDestination } from "../snapshot/deliver.ts";
import { renderSnapshot } from "../snapshot/render.ts";
import { resolveNamespace } from "./_args.ts";
import { contextsArgs, runSnapshotContexts, selectContexts } from "./_contexts.ts";
import { defineAicrCommand } from "./_define.ts";
import { fleetArgs, resolveFleetFlags, runFleetSnapshot } from "./_fleet-flags.ts";
import { nodeArgs, providerArgs, runNodeSnapshot } from "./_node.ts";
import { resolveSnapshotOptions } from "./_snapshot-flags.ts";

const writeStdout = (text: string): void => void process.stdout.write(text);

/**
 * aicr snapshot — from a jump host: deploy the run-isolated agent Job and return its node's snapshot.
 * With --local: collect the node this process runs on. (In the agent's pod, AICR_AGENT_MODE=true
 * routes `aicr snapshot` to the internal agent command: commands/agent.ts.)
 */
export default defineAicrCommand({
  name: "snapshot",
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
  transport: (flags) =>
    flags.string("add-roles-to-service-account") ? "offline" : flags.bool("local") ? "local" : "remote",
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
      env: "AICR_IMAGE",
    },
    "image-pull-secret": {
      type: "string",
      description: "Secret for pulling the image (repeatable)",
      valueHint: "name",
      repeatable: true,
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
      repeatable: true,
      pairs: true,
    },
    toleration: {
      type: "string",
      description: "key=value:effect or key:effect (repeatable); default: tolerate every taint",
      valueHint: "t",
      repeatable: true,
    },
    timeout: {
      type: "duration",
      description:
        "The whole run's bound, from the permission gate to the last result: the one node's, or with --all-nodes the whole fleet's (default 5m)",
    },
    // --no-cleanup is its negation (help gives it a line of its own).
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
      env: "AICR_REQUIRE_GPU",
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
      env: "AICR_RUNTIME_CLASS",
    },
    os: {
      type: "string",
      description:
        "Node OS family: ubuntu, rhel, cos, amazonlinux, ol, talos (talos: no host systemd mounts; SystemD read from the Node object)",
      valueHint: "family",
      env: "AICR_OS",
    },
    requests: {
      type: "string",
      description: "Agent resource requests, name=quantity,…",
      valueHint: "list",
      pairs: true,
      env: "AICR_REQUESTS",
    },
    limits: {
      type: "string",
      description: "Agent resource limits, name=quantity,…",
      valueHint: "list",
      pairs: true,
      env: "AICR_LIMITS",
    },
    "discover-network": {
      type: "boolean",
      description:
        "Add the NetworkTopology measurement (NICs, GPU↔NIC affinity); the run gains two read-only rules",
      env: "AICR_DISCOVER_NETWORK",
    },
    overwrite: {
      type: "boolean",
      description: "Write into an existing cm:// ConfigMap that aicr did not write (default: refused)",
    },
  },
  async run(ctx, flags) {
    const kube = { kubeconfig: flags.string("kubeconfig"), context: flags.string("context") };
    const output = flags.string("output");
    // The -o file never replaces a file this invocation reads.
    const outFile = output === undefined || output.endsWith("/") ? undefined : parseDestination(output);
    if (outFile?.kind === "file") {
      const inputs = ["template", "oke-addons", "aks-gpu-pools", "gke-gpu-pools", "cluster-config"] as const;
      checkOutputsApart(
        [{ flag: "--output", path: outFile.path }],
        [
          ...inputs.map((name) => ({ flag: `--${name}`, path: flags.string(name) ?? "" })),
          { flag: "--kubeconfig", path: kube.kubeconfig ?? ctx.env.KUBECONFIG?.split(":")[0] ?? "" },
        ],
      );
    }
    const namespace = resolveNamespace(flags.string("namespace"), ctx.env, kube);
    // Several --context, or --all-contexts: commands/_contexts.ts (undefined, with nothing read, otherwise).
    const remote = ctx.transport.name === "remote";
    if (remote && inPodWithoutKubeconfig({ kubeconfig: kube.kubeconfig, env: ctx.env }))
      throw new AicrError(
        "INVALID_REQUEST",
        "aicr snapshot runs inside a pod without AICR_AGENT_MODE=true and without a kubeconfig: it would deploy another agent Job from here",
        {
          remedy:
            "to collect this node from the pod, set AICR_AGENT_MODE=true in the container's env (aicr's own agent Job does); to deploy an agent Job from inside the cluster, pass --kubeconfig <path>",
        },
      );
    const contexts = selectContexts(
      { names: flags.list("context"), all: flags.bool("all-contexts") },
      { kubeconfig: kube.kubeconfig, env: ctx.env, remote },
    );
    const addRolesFor = flags.string("add-roles-to-service-account");
    if (addRolesFor !== undefined) {
      return writeAgentRbac({
        namespace,
        serviceAccount: addRolesFor,
        discoverNetwork: flags.bool("discover-network"),
        runId: ctx.runId,
        dir: ".",
        json: false,
        log: ctx.log,
        writeStdout,
      });
    }
    // --local: this host; K8s readings only from a cluster asked for (transport/_local.ts).
    const extras = {
      template: flags.string("template"),
      okeAddons: flags.string("oke-addons"),
      aksGpuPools: flags.string("aks-gpu-pools"),
      gkeGpuPools: flags.string("gke-gpu-pools"),
    };
    if (ctx.transport.name === "local")
      return runNodeSnapshot(ctx, flags, writeStdout, {
        ...extras,
        requireGpu: flags.written("require-gpu"),
        os: flags.string("os"),
        clusterConfig: flags.string("cluster-config"),
        discoverNetwork: flags.written("discover-network"),
      });
    const snapshotOptions = (ns: string) =>
      resolveSnapshotOptions(
        {
          ...extras,
          clusterConfig: flags.string("cluster-config"),
          namespace: ns,
          output,
          format: flags.string("format"),
          image: flags.string("image"),
          imagePullSecrets: flags.list("image-pull-secret"),
          jobName: flags.string("job-name"),
          serviceAccountName: flags.string("service-account-name"),
          nodeSelectors: flags.list("node-selector"),
          tolerations: flags.list("toleration"),
          timeout: flags.string("timeout"),
          noCleanup: !flags.bool("cleanup"),
          privileged: flags.written("privileged"),
          requireGpu: flags.written("require-gpu"),
          runtimeClass: flags.string("runtime-class"),
          os: flags.string("os"),
          requests: flags.string("requests"),
          limits: flags.string("limits"),
          discoverNetwork: flags.written("discover-network"),
          overwrite: flags.written("overwrite"),
          maxNodesPerEntry: flags.string("max-nodes-per-entry"),
          debug: flags.bool("debug"),
        },
        ctx.env,
      );
    // --all-nodes: one run over every target node (commands/_fleet-flags.ts), checked before any request.
    const fleetOf = (o: ReturnType<typeof snapshotOptions>) =>
      resolveFleetFlags({
        allNodes: flags.bool("all-nodes"),
        parallelism: flags.string("parallelism"),
        maxNodes: flags.string("max-nodes"),
        sample: flags.string("sample"),
        nodeTimeout: flags.string("node-timeout"),
        output,
        destination: o.destination,
        presentation: o.presentation,
      });
    if (contexts)
      return runSnapshotContexts(
        ctx,
        contexts,
        { ...kube, namespace: flags.string("namespace"), output },
        snapshotOptions,
        fleetOf,
      );
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
