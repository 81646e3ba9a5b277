import type { ServiceAccountMode } from "../agent/service-account-mode.ts";
import { AicrError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { KubeClient, KubeObject } from "../kube/client.ts";
import { isForbiddenError, isNotFoundError, statusOf } from "../kube/errors.ts";
import { agentRuleChecks, type Check, callerBaseChecks, callerRbacChecks, describeCheck } from "./checks.ts";

export const REVIEW_CONCURRENCY = 16;
/** Every verb on every resource of every group, cluster-wide. */
const EVERYTHING: Check = { verb: "*", group: "*", resource: "*" };
type Subject = { user: string; groups: string[] };
type Answer = Awaited<ReturnType<KubeClient["review"]>>;
const inFlight = new WeakMap<KubeClient, Map<string, Promise<Answer>>>();

/**
 * Single-flight access reviews: concurrent SDK calls through one client ask each question once while
 * it is in flight and share the answer (the server would give them the same one at that instant).
 * Nothing is cached once the answer is in: a later run asks again.
 */
function review(client: KubeClient, check: Check, subject?: Subject): Promise<Answer> {
  let pending = inFlight.get(client);
  if (!pending) {
    pending = new Map();
    inFlight.set(client, pending);
  }
  const key = JSON.stringify([
    check.verb,
    check.group,
    check.resource,
    check.subresource,
    check.namespace,
    subject,
  ]);
  const shared = pending.get(key);
  if (shared) return shared;
  const asked = client.review(check, subject);
  const map = pending;
  map.set(key, asked);
  const forget = () => void map.delete(key);
  asked.then(forget, forget);
  return asked;
}

const CALLER = "the caller (your kubeconfig identity)";

export interface GateInput {
  namespace: string;
  outputNamespace: string;
  ownsOutput: boolean;
  discoverNetwork: boolean;
  /** Resolves prefix vs exact (a look-up of the named ServiceAccount). */
  resolveMode: () => Promise<ServiceAccountMode>;
  /** Set when no ServiceAccount name was given: prefix mode, no look-up needed. */
  knownMode?: ServiceAccountMode | undefined;
  /** The namespace's read (the object, or the error it answered), when the caller already sent it. */
  namespaceRead?: Promise<unknown> | undefined;
  /** The agent pod as the Job would create it, for the admission dry run. */
  dryRunPod: (mode: ServiceAccountMode) => KubeObject;
  /** Once aborted, no further review is sent. */
  signal?: AbortSignal | undefined;
}

export interface GateResult {
  mode: ServiceAccountMode;
  denied: string[];
  notes: string[];
  /** Allowed every verb on every resource (cluster-admin): may bind any Role without holding its rules. */
  mayBind: boolean;
}

/** Bounded fan-out: at most `limit` reviews in flight. */
async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
  signal?: AbortSignal,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    // After one failure nothing new is sent: the call has already failed (an unreachable server
    // would otherwise be asked every remaining question, one wave after another).
    while (next < items.length && !failed) {
      signal?.throwIfAborted();
      const i = next++;
      try {
        out[i] = await fn(items[i] as T);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

async function callerMissing(client: KubeClient, checks: Check[], signal?: AbortSignal): Promise<Check[]> {
  const answers = await mapLimit(checks, REVIEW_CONCURRENCY, (c) => review(client, c), signal);
  return checks.filter((_, i) => !answers[i]?.allowed);
}

/**
 * Escalation prevention, predicted: the apiserver refuses a Role/ClusterRole (and its binding) that
 * grants anything the caller does not hold, unless the caller has `escalate` / `bind` on that kind.
 */
async function escalationLines(client: KubeClient, input: GateInput): Promise<string[]> {
  const rules = agentRuleChecks(input);
  const kinds = [
    ["Role", "roles", rules.role, input.namespace],
    ["ClusterRole", "clusterroles", rules.clusterRole, undefined],
  ] as const;
  // One wave: what the caller holds, and whether it may escalate/bind, asked together for both kinds.
  const answers = await Promise.all(
    kinds.map(([, resource, checks, ns]) =>
      Promise.all([
        callerMissing(client, checks, input.signal),
        review(client, { verb: "escalate", group: "rbac.authorization.k8s.io", resource, namespace: ns }),
        review(client, { verb: "bind", group: "rbac.authorization.k8s.io", resource, namespace: ns }),
      ]),
    ),
  );
  const lines: string[] = [];
  for (const [i, [kind]] of kinds.entries()) {
    const [missing, escalate, bind] = answers[i] ?? [[], { allowed: true }, { allowed: true }];
    if (missing.length === 0 || (escalate.allowed && bind.allowed)) continue;
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
    const answers = await mapLimit(
      checks,
      REVIEW_CONCURRENCY,
      (c) => review(client, c, { user, groups }),
      input.signal,
    );
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
  // One wave: the dry run is sent alongside the questions that decide whether its answer counts.
  const [ns, may, dryRun] = await Promise.all([
    input.namespaceRead ??
      client.get({ apiVersion: "v1", kind: "Namespace", name: input.namespace }).catch((err: unknown) => err),
    review(client, { verb: "create", group: "", resource: "pods", namespace: input.namespace }),
    client.create(input.dryRunPod(mode), { dryRun: true }).then(
      () => undefined,
      (err: unknown) => err,
    ),
  ]);
  if (isNotFoundError(ns))
    return {
      denied: [],
      notes: [`admission was not predicted: namespace ${input.namespace} does not exist yet`],
    };
  if (!may.allowed)
    return {
      denied: [],
      notes: ["admission was not predicted: the caller may not create pods, so it cannot dry-run one"],
    };
  if (dryRun === undefined) return { denied: [], notes: [] };
  const err = dryRun;
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

interface ModeFindings {
  lines: string[];
  notes: string[];
  hints: string[];
}

type Admission = Promise<{ denied: string[]; notes: string[] }>;

async function modeSpecific(
  client: KubeClient,
  input: GateInput,
  mode: ServiceAccountMode,
  log: Logger,
  admissionSent?: Admission,
): Promise<ModeFindings> {
  const out: ModeFindings = { lines: [], notes: [], hints: [] };
  if (mode.mode === "prefix") {
    const [rbac, escalation, admission] = await Promise.all([
      callerMissing(client, callerRbacChecks(input.namespace), input.signal),
      escalationLines(client, input),
      admissionSent ?? admissionLines(client, input, mode),
    ]);
    out.lines.push(
      ...rbac.map((c) => `${CALLER} cannot ${describeCheck(c)}`),
      ...escalation,
      ...admission.denied,
    );
    out.notes.push(...admission.notes);
    if (rbac.length > 0) {
      out.hints.push(
        "each run creates its own ServiceAccount, Role, RoleBinding, ClusterRole and ClusterRoleBinding and always deletes them, so it needs create and delete on all five; running as an existing ServiceAccount (--service-account-name <existing>) needs none of them",
      );
    }
  } else {
    const [sa, admission] = await Promise.all([
      serviceAccountLines(client, input, mode.name, log),
      admissionSent ?? admissionLines(client, input, mode),
    ]);
    out.lines.push(...sa, ...admission.denied);
    out.notes.push(...admission.notes);
    if (sa.length > 0) {
      out.hints.push(
        `grant the ServiceAccount the agent's rules: aicr render-rbac ${mode.name} --namespace ${input.namespace}, then kubectl apply -f snapshot-rbac-<run-id>/`,
      );
    }
  }
  return out;
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
  // Without --service-account-name the mode is known up front and the admission dry run goes out at
  // once; with it, the ServiceAccount look-up goes out first, alongside everything else.
  const modeP = input.knownMode ? Promise.resolve(input.knownMode) : input.resolveMode();
  modeP.catch(() => {});
  const admission = input.knownMode ? admissionLines(client, input, input.knownMode) : undefined;
  admission?.catch(() => {});
  // A caller allowed every verb on every resource cluster-wide (cluster-admin) holds everything the
  // run needs and grants: one review instead of ~50. Anyone else gets the full list, one line each.
  // A refusal to answer is "not everything"; a server that cannot be reached fails the gate here.
  const everything = await review(client, EVERYTHING).catch((err: unknown) => {
    if (err instanceof AicrError && (err.code === "UNAVAILABLE" || err.code === "CANCELED")) throw err;
    return { allowed: false };
  });
  input.signal?.throwIfAborted();
  if (everything.allowed) {
    const mode = await modeP;
    const found: ModeFindings =
      mode.mode === "exact"
        ? await modeSpecific(client, input, mode, log, admission)
        : await (admission ?? admissionLines(client, input, mode)).then((a) => ({
            lines: a.denied,
            notes: a.notes,
            hints: [],
          }));
    if (found.lines.length > 0) throw unauthorized(found.lines, found.hints);
    for (const n of found.notes) log.info(n);
    return { mode, denied: [], notes: found.notes, mayBind: true };
  }
  const early = input.knownMode ? modeSpecific(client, input, input.knownMode, log, admission) : undefined;
  early?.catch(() => {});
  const phase1 = await callerMissing(client, callerBaseChecks(input), input.signal);
  const lines = phase1.map((c) => `${CALLER} cannot ${describeCheck(c)}`);
  if (phase1.some((c) => c.resource === "serviceaccounts" && c.verb === "get")) {
    throw unauthorized(lines, [
      `reading ServiceAccounts in namespace "${input.namespace}" is required before anything else (to tell an existing ServiceAccount from a name prefix); the remaining, mode-specific permissions were not evaluated`,
    ]);
  }
  input.signal?.throwIfAborted();
  const mode = await modeP;
  const found = await (early ?? modeSpecific(client, input, mode, log));
  lines.push(...found.lines);
  if (lines.length > 0) throw unauthorized(lines, found.hints);
  for (const n of found.notes) log.info(n);
  return { mode, denied: [], notes: found.notes, mayBind: false };
}

function unauthorized(lines: string[], hints: string[]): AicrError {
  return new AicrError("UNAUTHORIZED", `missing required permissions:\n  ${lines.join("\n  ")}`, {
    remedy: hints.join("; ") || "ask your cluster administrator for the permissions listed",
    context: { missing: lines.length },
  });
}
