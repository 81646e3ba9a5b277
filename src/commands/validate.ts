import { runValidate } from "../validate/flow.ts";
import { PHASES } from "../validate/recipe.ts";
import { defineAicrCommand } from "./_define.ts";
import { providerArgs } from "./_node.ts";
import { resolveValidateOptions } from "./_validate-flags.ts";

const writeStdout = (text: string): void => void process.stdout.write(text);

/**
 * aicr validate — check a cluster against a recipe: readiness of the snapshot, then the recipe's
 * checks as run-isolated validation Jobs (each runs the internal `aicr validator <check>`).
 */
export default defineAicrCommand({
  name: "validate",
  examples: [
    "aicr validate -r examples/recipe.yaml -s node.yaml --no-cluster",
    "aicr validate -r examples/recipe.yaml -n gpu-operator",
    "aicr validate -r cm://ops/recipe -s cm://ops/snapshot -o report.json --junit report.xml",
    "aicr validate -r recipe.yaml -n ops --service-account-name aicr-runner -o cm://ops/validation-report",
    "aicr validate -r https://recipes.example.com/h100.yaml --ca-file corp-ca.pem -s node.yaml --no-cluster",
  ],
  globals: {
    namespace: {
      description: "Namespace of the run's Jobs (default: $AICR_NAMESPACE, then aicr-validation)",
    },
  },
  config: true,
  transport: "remote",
  args: {
    recipe: {
      type: "string",
      alias: "r",
      description: "Recipe: a file, cm://<namespace>/<name> or an https:// URL",
      valueHint: "src",
    },
    snapshot: {
      type: "string",
      alias: "s",
      description:
        "Snapshot: a file, cm://<namespace>/<name> or an https:// URL (default: capture one live with the agent)",
      valueHint: "src",
    },
    "ca-file": {
      type: "string",
      description: "PEM CA trusted (besides the system's) for an https:// --recipe or --snapshot",
      valueHint: "file",
    },
    phase: {
      type: "enum",
      options: [...PHASES, "all"],
      description: "deployment, performance, conformance or all (repeatable; default all)",
      valueHint: "phase",
      repeatable: true,
    },
    "skip-check": {
      type: "string",
      description: "Withhold a declared check; reported skipped (repeatable)",
      valueHint: "check",
      repeatable: true,
    },
    "fail-on-error": {
      type: "boolean",
      default: true,
      description: "Exit 8 when a check fails",
      negativeDescription: "Report failed checks but exit 0",
    },
    "fail-fast": { type: "boolean", description: "Stop after the first phase with a failing check" },
    "no-cluster": { type: "boolean", description: "Readiness only, from --snapshot; nothing is deployed" },
    "allow-missing": {
      type: "boolean",
      description: "A constraint whose reading the snapshot lacks does not fail",
    },
    output: {
      type: "string",
      alias: "o",
      description: "Report destination: stdout (default), a file, or cm://<namespace>/<name> (CTRF JSON)",
      valueHint: "dest",
    },
    format: {
      type: "enum",
      options: ["table", "json"],
      alias: "t",
      description: "Report format: table (default on a terminal) or json (CTRF)",
      valueHint: "table|json",
    },
    junit: { type: "string", description: "Also write a JUnit XML report to this file", valueHint: "file" },
    image: {
      type: "string",
      description:
        "Image of the capture agent and the validators (default $AICR_VALIDATOR_IMAGE, $AICR_IMAGE)",
      valueHint: "ref",
      env: "AICR_VALIDATOR_IMAGE",
    },
    "image-pull-secret": {
      type: "string",
      description: "Secret for pulling the image, on the capture agent and the validator pods (repeatable)",
      valueHint: "name",
      repeatable: true,
    },
    "job-name": {
      type: "string",
      description: "Job name prefix of the live capture; the run ID is appended (default aicr-validate)",
      valueHint: "prefix",
    },
    "service-account-name": {
      type: "string",
      description:
        "Capture as this existing ServiceAccount (no RBAC created for the capture); if none exists, a name prefix",
      valueHint: "name",
    },
    "node-selector": {
      type: "string",
      description: "key=value for the capture agent and the validator pods (repeatable)",
      valueHint: "k=v",
      repeatable: true,
      pairs: true,
    },
    toleration: {
      type: "string",
      description:
        "key=value:effect or key:effect, for the capture agent and the validator pods (repeatable)",
      valueHint: "t",
      repeatable: true,
    },
    "require-gpu": {
      type: "boolean",
      description: "Request one nvidia.com/gpu for the capture agent",
      env: "AICR_REQUIRE_GPU",
    },
    ...providerArgs,
    timeout: {
      type: "duration",
      description:
        "The whole run's bound, from the permission gate to the last result: the live capture and every check (default 5m; with conformance or performance checks, enough for each check's own limit)",
    },
    "nccl-image": {
      type: "string",
      description:
        "The NCCL tests image nccl-all-reduce-bw runs (yours, e.g. mirrored; without it the check is skipped)",
      valueHint: "ref",
    },
    "cncf-submission": {
      type: "string",
      description:
        "Write the CNCF AI Conformance evidence files (one per requirement) into this new directory",
      valueHint: "dir",
    },
    "no-cleanup": {
      type: "boolean",
      description: "Keep the run's Jobs, RBAC and data ConfigMaps (they are listed)",
    },
  },
  async run(ctx, flags) {
    const options = resolveValidateOptions(
      {
        recipe: flags.string("recipe"),
        kubeconfig: flags.string("kubeconfig"),
        snapshot: flags.string("snapshot"),
        caFile: flags.string("ca-file"),
        namespace: flags.string("namespace"),
        phases: flags.list("phase"),
        skipChecks: flags.list("skip-check"),
        failOnError: flags.bool("fail-on-error"),
        failFast: flags.bool("fail-fast"),
        noCluster: flags.bool("no-cluster"),
        allowMissing: flags.bool("allow-missing"),
        output: flags.string("output"),
        format: flags.string("format"),
        junit: flags.string("junit"),
        image: flags.string("image"),
        timeout: flags.string("timeout"),
        ncclImage: flags.string("nccl-image"),
        cncfSubmission: flags.string("cncf-submission"),
        noCleanup: flags.bool("no-cleanup"),
        serviceAccountName: flags.string("service-account-name"),
        jobName: flags.string("job-name"),
        nodeSelectors: flags.list("node-selector"),
        tolerations: flags.list("toleration"),
        imagePullSecrets: flags.list("image-pull-secret"),
        requireGpu: flags.written("require-gpu"),
        okeAddons: flags.string("oke-addons"),
        aksGpuPools: flags.string("aks-gpu-pools"),
        gkeGpuPools: flags.string("gke-gpu-pools"),
      },
      ctx.env,
      Boolean(process.stdout.isTTY),
    );
    await runValidate(options, {
      log: ctx.log,
      signal: ctx.signal,
      runId: ctx.runId,
      invocationId: ctx.invocationId,
      version: ctx.version,
      env: ctx.env,
      connect: async () => {
        const client = await ctx.transport.connect();
        if (!client) throw new Error("the remote transport always yields a client");
        return client;
      },
      writeStdout,
      now: () => Date.now(),
    });
  },
});
