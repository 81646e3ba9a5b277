import type { Toleration } from "../deployer/job-spec.ts";
import type { SnapshotRunOptions } from "../remote/options.ts";
import type { ConfigMapRef } from "../snapshot/cm-uri.ts";
import type { Snapshot } from "../snapshot/schema.ts";
import type { DocumentSource } from "../snapshot/source.ts";
import type { PlannedCheck } from "./_catalog.ts";
import type { Phase, Recipe } from "./recipe.ts";

export const DEFAULT_VALIDATE_NAMESPACE = "aicr-validation";

/** The command an https:// fetch's remedy names (download the file, then run it with the file). */
export const VALIDATE_COMMAND = "aicr validate";

export const DEFAULT_VALIDATE_TIMEOUT_MS = 5 * 60_000;

/** Job prefix of the live capture's agent. */
export const CAPTURE_JOB_PREFIX = "aicr-validate";

/** Placement and pull settings of the pods a validation deploys (the capture agent's are in `capture`). */
export interface PodPlacement {
  nodeSelector?: Record<string, string> | undefined;
  tolerations?: Toleration[] | undefined;
  imagePullSecrets: string[];
}

/** Key of the CTRF JSON in a cm:// report. */
export const REPORT_CONFIGMAP_KEY = "report.json";

export type Source = DocumentSource;

export interface ValidateOptions {
  recipe: Source;
  /** Absent → a live capture through the agent. */
  snapshot?: Source | undefined;
  /** --ca-file's PEM: trusted, besides the system roots, for an https:// recipe or snapshot. */
  ca?: string | undefined;
  /** The live capture's snapshot run, resolved with the flags (absent with --snapshot). */
  capture?: Omit<SnapshotRunOptions, "destination" | "format"> | undefined;
  namespace: string;
  phases: Phase[];
  skipChecks: string[];
  failOnError: boolean;
  failFast: boolean;
  noCluster: boolean;
  allowMissing: boolean;
  /** Absent → stdout. */
  outputPath?: string | undefined;
  /** -o cm://<ns>/<name>: the CTRF JSON applied there (the user's: never cleaned up). */
  outputConfigMap?: ConfigMapRef | undefined;
  format: "json" | "table";
  junitPath?: string | undefined;
  /** Image of the capture agent and of the validators (the same binary). */
  image?: string | undefined;
  timeoutMs: number;
  /** --timeout was given: without it, a plan with conformance or performance checks gets a longer default. */
  timeoutGiven?: boolean | undefined;
  cleanup: boolean;
  /** --node-selector, --toleration, --image-pull-secret on the validator pods. */
  placement: PodPlacement;
  /** --nccl-image: the operator's NCCL test image for nccl-all-reduce-bw (never a default). */
  ncclImage?: string | undefined;
  /** --cncf-submission <dir>: the CNCF evidence files are written there (a new directory). */
  cncfSubmissionDir?: string | undefined;
}

/** What a validation checks, read and planned before any Job. */
export interface Inputs {
  recipe: Recipe;
  recipeText: string;
  snapshot: Snapshot;
  snapshotText: string;
  checks: PlannedCheck[];
}
