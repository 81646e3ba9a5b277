import { resolveServiceAccountMode, type ServiceAccountMode } from "../agent/service-account-mode.ts";
import { AicrError, bulletList } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { KubeClient, KubeObject } from "../kube/client.ts";
import {
  isBadRequest,
  isForbidden,
  isInvalid,
  isMethodNotSupported,
  isNotFound,
  isUnauthorized,
} from "../kube/errors.ts";
import {
  type AccessAnswer,
  type AccessCheck,
  CALLER,
  callerNamed,
  deniedChecks,
  describeMissing,
  type ReviewOptions,
  reviewAll,
} from "../kube/reviews.ts";
import { agentRuleChecks, callerBaseChecks, callerRbacChecks } from "./_checks.ts";

const RBAC = "rbac.authorization.k8s.io";
/** Every verb on every resource of every group, cluster-wide. */
const EVERYTHING: AccessCheck = { verb: "*", group: "*", resource: "*" };

/** One question's answer (single-flight, as every review). */
async function reviewOne(
  client: KubeClient,
  check: AccessCheck,
  options: ReviewOptions,
): Promise<AccessAnswer> {
  const [answer] = await reviewAll(client, [check], options);
  return answer as AccessAnswer;
}

export interface GateInput {
  namespace: string;
  outputNamespace: string;
  ownsOutput: boolean;
  discoverNetwork: boolean;
  /**
   * --service-account-name: looked up (exact if it exists, else a prefix). Unset: prefix mode, known
   * up front with no look-up.
   */
  serviceAccountName?: string | undefined;
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

/**
 * Escalation prevention, predicted: the apiserver refuses a Role/ClusterRole (and its binding) that
 * grants anything the caller does not hold, unless the caller has `escalate` / `bind` on that kind.
 */
async function escalationLines(
  client: KubeClient,
  input: GateInput,
  caller: Promise<string>,
): Promise<string[]> {
  const rules = agentRuleChecks(input);
  const kinds = [
    ["Role", "roles", rules.role, input.namespace],
    ["ClusterRole", "clusterroles", rules.clusterRole, undefined],
  ] as const;
  const signal = { signal: input.signal };
  // One wave: what the caller holds, and whether it may escalate/bind, asked together for both kinds.
  const answers = await Promise.all(
    kinds.map(([, resource, checks, namespace]) =>
      Promise.all([
        deniedChecks(client, checks, signal),
        reviewAll(
          client,
          [
            { verb: "escalate", group: RBAC, resource, namespace },
            { verb: "bind", group: RBAC, resource, namespace },
          ],
          signal,
        ),
      ]),
    ),
  );
  const lines: string[] = [];
  const who = await caller;
  for (const [i, [kind]] of kinds.entries()) {
    const [missing, mayEscalate] = answers[i] ?? [[], []];
    if (missing.length === 0 || mayEscalate.every((a) => a.allowed)) continue;
    lines.push(...missing.map((m) => describeMissing(m, { who, grantedBy: `the run's ${kind}` })));
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
    const missing = await deniedChecks(client, checks, { signal: input.signal, subject: { user, groups } });
    return missing.map((c) => describeMissing(c, { who: `agent ServiceAccount "${user}"` }));
  } catch (err) {
    if (!isForbidden(err) && !isUnauthorized(err) && !isNotFound(err) && !isMethodNotSupported(err))
      throw err;
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
    reviewOne(
      client,
      { verb: "create", group: "", resource: "pods", namespace: input.namespace },
      { signal: input.signal },
    ),
    client.create(input.dryRunPod(mode), { dryRun: true }).then(
      () => undefined,
      (err: unknown) => err,
    ),
  ]);
  if (isNotFound(ns))
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
  if (isForbidden(err) || isInvalid(err) || isBadRequest(err)) {
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
  caller: Promise<string>,
  admissionSent?: Admission,
): Promise<ModeFindings> {
  const out: ModeFindings = { lines: [], notes: [], hints: [] };
  if (mode.kind === "prefix") {
    const [rbac, escalation, admission, who] = await Promise.all([
      deniedChecks(client, callerRbacChecks(input.namespace), { signal: input.signal }),
      escalationLines(client, input, caller),
      admissionSent ?? admissionLines(client, input, mode),
      caller,
    ]);
    out.lines.push(...rbac.map((c) => describeMissing(c, { who })), ...escalation, ...admission.denied);
    out.notes.push(...admission.notes);
    if (rbac.length > 0) {
      out.hints.push(
        "each run creates its own ServiceAccount, Role, RoleBinding, ClusterRole and ClusterRoleBinding and always deletes them, so it needs create and delete on all five; running as an existing ServiceAccount (--service-account-name <existing>) needs none of them",
      );
    }
    if (escalation.length > 0) {
      out.hints.push(
        'the run\'s Role and ClusterRole may grant only what you hold yourself: ask for the permissions listed, or for "escalate" and "bind" on roles and clusterroles; running as an existing ServiceAccount (--service-account-name <existing>) creates neither',
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
  const knownMode: ServiceAccountMode | undefined = input.serviceAccountName
    ? undefined
    : { kind: "prefix", prefix: undefined };
  const modeP = knownMode
    ? Promise.resolve(knownMode)
    : resolveServiceAccountMode(client, { namespace: input.namespace, name: input.serviceAccountName });
  modeP.catch(() => {});
  const admission = knownMode ? admissionLines(client, input, knownMode) : undefined;
  admission?.catch(() => {});
  // A caller allowed every verb on every resource cluster-wide (cluster-admin) holds everything the
  // run needs and grants: one review instead of ~50. Anyone else gets the full list, one line each.
  // A refusal to answer is "not everything"; a server that cannot be reached fails the gate here.
  const everything = await reviewOne(client, EVERYTHING, { signal: input.signal }).catch((err: unknown) => {
    if (err instanceof AicrError && (err.code === "UNAVAILABLE" || err.code === "CANCELED")) throw err;
    return { allowed: false };
  });
  input.signal?.throwIfAborted();
  if (everything.allowed) {
    const mode = await modeP;
    const found: ModeFindings =
      mode.kind === "exact"
        ? await modeSpecific(client, input, mode, log, Promise.resolve(CALLER), admission)
        : await (admission ?? admissionLines(client, input, mode)).then((a) => ({
            lines: a.denied,
            notes: a.notes,
            hints: [],
          }));
    if (found.lines.length > 0) throw unauthorized(found.lines, found.hints);
    for (const n of found.notes) log.info(n);
    return { mode, denied: [], notes: found.notes, mayBind: true };
  }
  // Who the caller is goes out with the reviews (no round trip of its own): a refusal names it. A
  // server that will not say (SelfSubjectReview refused or not served) leaves the generic wording.
  const caller = client.whoAmI().then(callerNamed, () => CALLER);
  const early = knownMode ? modeSpecific(client, input, knownMode, log, caller, admission) : undefined;
  early?.catch(() => {});
  const phase1 = await deniedChecks(client, callerBaseChecks(input), { signal: input.signal });
  const who = await caller;
  const lines = phase1.map((c) => describeMissing(c, { who }));
  // With --service-account-name, the ServiceAccount look-up decides which checks apply (an existing
  // one's own rules, or the run's RBAC objects): without it they cannot be chosen, so none are listed.
  // Without the flag the mode is known and its checks were asked alongside: they are listed too.
  if (!early && phase1.some((c) => c.resource === "serviceaccounts" && c.verb === "get")) {
    throw unauthorized(lines, [
      `reading ServiceAccounts in namespace "${input.namespace}" is needed to tell whether --service-account-name names an existing ServiceAccount; until it is granted, the permissions that depend on that answer (the existing ServiceAccount's rules, or the run's own RBAC objects) cannot be checked and are not listed`,
    ]);
  }
  input.signal?.throwIfAborted();
  const found = await (early ?? modeP.then((mode) => modeSpecific(client, input, mode, log, caller)));
  const mode = await modeP;
  lines.push(...found.lines);
  if (lines.length > 0) throw unauthorized(lines, found.hints);
  for (const n of found.notes) log.info(n);
  return { mode, denied: [], notes: found.notes, mayBind: false };
}

function unauthorized(lines: string[], hints: string[]): AicrError {
  return new AicrError("UNAUTHORIZED", `missing required permissions:${bulletList(lines)}`, {
    remedy: hints.join("; ") || "ask your cluster administrator for the permissions listed",
    context: { missing: lines.length },
  });
}
