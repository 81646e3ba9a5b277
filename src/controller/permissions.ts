import type { ServiceAccountMode } from "../agent/service-account-mode.ts";
import { AicrError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { KubeClient, KubeObject } from "../kube/client.ts";
import { isForbiddenError, isNotFoundError, statusOf } from "../kube/errors.ts";
import { agentRuleChecks, type Check, callerBaseChecks, callerRbacChecks, describeCheck } from "./checks.ts";

export const REVIEW_CONCURRENCY = 16;
const CALLER = "the caller (your kubeconfig identity)";

export interface GateInput {
  namespace: string;
  outputNamespace: string;
  ownsOutput: boolean;
  discoverNetwork: boolean;
  /** Resolves prefix vs exact; runs after the caller may read ServiceAccounts. */
  resolveMode: () => Promise<ServiceAccountMode>;
  /** The agent pod as the Job would create it, for the admission dry run. */
  dryRunPod: (mode: ServiceAccountMode) => KubeObject;
}

export interface GateResult {
  mode: ServiceAccountMode;
  denied: string[];
  notes: string[];
}

/** Bounded fan-out: at most `limit` reviews in flight. */
async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

async function callerMissing(client: KubeClient, checks: Check[]): Promise<Check[]> {
  const answers = await mapLimit(checks, REVIEW_CONCURRENCY, (c) => client.review(c));
  return checks.filter((_, i) => !answers[i]?.allowed);
}

/**
 * Escalation prevention, predicted: the apiserver refuses a Role/ClusterRole (and its binding) that
 * grants anything the caller does not hold, unless the caller has `escalate` / `bind` on that kind.
 */
async function escalationLines(client: KubeClient, input: GateInput): Promise<string[]> {
  const rules = agentRuleChecks(input);
  const lines: string[] = [];
  for (const [kind, resource, checks, ns] of [
    ["Role", "roles", rules.role, input.namespace],
    ["ClusterRole", "clusterroles", rules.clusterRole, undefined],
  ] as const) {
    const missing = await callerMissing(client, checks);
    if (missing.length === 0) continue;
    const escalate = await client.review({
      verb: "escalate",
      group: "rbac.authorization.k8s.io",
      resource,
      namespace: ns,
    });
    const bind = await client.review({
      verb: "bind",
      group: "rbac.authorization.k8s.io",
      resource,
      namespace: ns,
    });
    if (escalate.allowed && bind.allowed) continue;
    for (const m of missing) {
      lines.push(
        `${CALLER} cannot grant ${describeCheck(m)}: creating the run's ${kind} would be refused as privilege escalation`,
      );
    }
  }
  return lines;
}

/** Exact mode: the existing ServiceAccount must already hold what the agent does (SubjectAccessReview). */
async function serviceAccountLines(
  client: KubeClient,
  input: GateInput,
  name: string,
  log: Logger,
): Promise<string[]> {
  const user = `system:serviceaccount:${input.namespace}:${name}`;
  const groups = [
    "system:serviceaccounts",
    `system:serviceaccounts:${input.namespace}`,
    "system:authenticated",
  ];
  const rules = agentRuleChecks(input);
  const checks = [...rules.role, ...rules.clusterRole];
  try {
    const answers = await mapLimit(checks, REVIEW_CONCURRENCY, (c) => client.review(c, { user, groups }));
    return checks
      .filter((_, i) => !answers[i]?.allowed)
      .map((c) => `agent ServiceAccount "${user}" cannot ${describeCheck(c)}`);
  } catch (err) {
    const status = statusOf(err).status;
    if (status !== 403 && status !== 401 && status !== 404 && status !== 405) throw err;
    log.warn(
      "could not verify the agent ServiceAccount's own permissions; continuing, but a missing rule will surface as an in-pod failure minutes from now instead of here",
      {
        serviceAccount: name,
        namespace: input.namespace,
        uncheckedRules: checks.length,
        remedy: `grant the caller 'create subjectaccessreviews.authorization.k8s.io', or verify by hand with: kubectl auth can-i --list --as ${user}`,
      },
    );
    return [];
  }
}

/** Admission, predicted by a server-side dry run of the agent pod: Pod Security and webhooks answer now, not later. */
async function admissionLines(
  client: KubeClient,
  input: GateInput,
  mode: ServiceAccountMode,
): Promise<{ denied: string[]; notes: string[] }> {
  const ns = await client
    .get({ apiVersion: "v1", kind: "Namespace", name: input.namespace })
    .catch((err: unknown) => err);
  if (isNotFoundError(ns))
    return {
      denied: [],
      notes: [`admission was not predicted: namespace ${input.namespace} does not exist yet`],
    };
  const may = await client.review({
    verb: "create",
    group: "",
    resource: "pods",
    namespace: input.namespace,
  });
  if (!may.allowed)
    return {
      denied: [],
      notes: ["admission was not predicted: the caller may not create pods, so it cannot dry-run one"],
    };
  try {
    await client.create(input.dryRunPod(mode), { dryRun: true });
    return { denied: [], notes: [] };
  } catch (err) {
    if (isForbiddenError(err) || statusOf(err).status === 422 || statusOf(err).status === 400) {
      return {
        denied: [
          `the agent pod would be rejected by admission in namespace "${input.namespace}": ${(err as Error).message.replace(/^creating [^:]*: /, "")}`,
        ],
        notes: [],
      };
    }
    return { denied: [], notes: [`admission was not predicted: ${(err as Error).message}`] };
  }
}

/**
 * The pre-flight gate: before anything is written, every missing permission (and every predicted
 * escalation or admission refusal) is reported at once. Access reviews persist nothing.
 */
export async function checkPermissions(
  client: KubeClient,
  input: GateInput,
  log: Logger,
): Promise<GateResult> {
  const base = callerBaseChecks(input);
  const phase1 = await callerMissing(client, base);
  const lines = phase1.map((c) => `${CALLER} cannot ${describeCheck(c)}`);
  if (phase1.some((c) => c.resource === "serviceaccounts" && c.verb === "get")) {
    throw unauthorized(lines, [
      `reading ServiceAccounts in namespace "${input.namespace}" is required before anything else (to tell an existing ServiceAccount from a name prefix); the remaining, mode-specific permissions were not evaluated`,
    ]);
  }
  const mode = await input.resolveMode();
  const notes: string[] = [];
  const hints: string[] = [];
  if (mode.mode === "prefix") {
    const [rbac, escalation, admission] = await Promise.all([
      callerMissing(client, callerRbacChecks(input.namespace)),
      escalationLines(client, input),
      admissionLines(client, input, mode),
    ]);
    lines.push(
      ...rbac.map((c) => `${CALLER} cannot ${describeCheck(c)}`),
      ...escalation,
      ...admission.denied,
    );
    notes.push(...admission.notes);
    if (rbac.length > 0) {
      hints.push(
        "each run creates its own ServiceAccount, Role, RoleBinding, ClusterRole and ClusterRoleBinding and always deletes them, so it needs create and delete on all five; running as an existing ServiceAccount (--service-account-name <existing>) needs none of them",
      );
    }
  } else {
    const [sa, admission] = await Promise.all([
      serviceAccountLines(client, input, mode.name, log),
      admissionLines(client, input, mode),
    ]);
    lines.push(...sa, ...admission.denied);
    notes.push(...admission.notes);
    if (sa.length > 0) {
      hints.push(
        `grant the ServiceAccount the agent's rules: aicr render-rbac ${mode.name} --namespace ${input.namespace}, then kubectl apply -f snapshot-rbac-<run-id>/`,
      );
    }
  }
  if (lines.length > 0) throw unauthorized(lines, hints);
  for (const n of notes) log.info(n);
  return { mode, denied: [], notes };
}

function unauthorized(lines: string[], hints: string[]): AicrError {
  return new AicrError("UNAUTHORIZED", `missing required permissions:\n  ${lines.join("\n  ")}`, {
    remedy: hints.join("; ") || "ask your cluster administrator for the permissions listed",
    context: { missing: lines.length },
  });
}
