/**
 * The one permission gate. A caller states what it is about to do as data — the caller's own access
 * checks, the Roles it would create (escalation prevention predicted), the subjects that must already
 * hold rules, the objects admission must take (dry runs) — and passGate asks all of it, each distinct
 * question once, and refuses with every gap in one UNAUTHORIZED error, before anything is written.
 * Reviews and dry runs persist nothing.
 */
import { unlessAborted } from "../core/async.ts";
import { AicrError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import { type DryRun, dryRun, Questions, type SubjectNeed, subjectLines } from "./_gate-questions.ts";
import type { KubeClient } from "./client.ts";
import { type AccessCheck, CALLER, callerNamed, checkKey, describeMissing } from "./reviews.ts";

export type { DryRun, SubjectNeed };

export const RBAC_GROUP = "rbac.authorization.k8s.io";
/** Every verb on every resource of every group, cluster-wide. */
export const EVERYTHING: AccessCheck = { verb: "*", group: "*", resource: "*" };

/** A permission the caller must hold. */
export interface Need extends AccessCheck {
  /** Said in the remedy when this one is missing (each hint once, in order). */
  hint?: string | undefined;
  /** false: a missing one does not refuse; it is returned in GateOutcome.unmet (e.g. a dry run's deletes). */
  required?: boolean | undefined;
}

/** A rule as a Role states it. */
export interface GrantedRule {
  apiGroups: readonly string[];
  resources: readonly string[];
  verbs: readonly string[];
}

/**
 * A Role or ClusterRole the caller would create and bind. RBAC escalation prevention refuses it
 * unless the caller holds every permission it grants (in its namespace, or cluster-wide) or may both
 * `escalate` and `bind` that kind.
 */
export interface Grant {
  kind: "Role" | "ClusterRole";
  /** A Role's namespace; a ClusterRole has none. */
  namespace?: string | undefined;
  rules: readonly GrantedRule[];
  /** Who grants it, as the refusal says: "the run's ClusterRole". */
  grantedBy: string;
  hint?: string | undefined;
}

/** What a gate asks, as data. */
export interface GateSpec<N extends Need = Need> {
  access?: readonly N[] | undefined;
  grants?: readonly Grant[] | undefined;
  subjects?: readonly SubjectNeed[] | undefined;
  dryRuns?: readonly DryRun[] | undefined;
  /** A part known only once a read answers (e.g. whether a named ServiceAccount exists). */
  later?: LaterPart<N> | undefined;
}

export interface LaterPart<N extends Need> {
  /** Asked with the rest; while one is missing the part cannot be chosen: it is not asked, `unchecked` is the remedy. */
  needs: readonly AccessCheck[];
  part: Promise<GateSpec<N>>;
  unchecked: string;
}

/** The one refusal: its message around the lines, the remedy when no gap carries a hint, its context. */
export interface Refusal {
  message: (lines: readonly string[]) => string;
  remedy: string;
  /** Default: { missing: lines }. */
  context?: ((lines: readonly string[]) => Record<string, unknown>) | undefined;
}

export interface GateOptions {
  refusal: Refusal;
  /** Honoured throughout: nothing new is sent once it aborts, and the gate rejects with its reason. */
  signal?: AbortSignal | undefined;
  /** Told the notes (admission not predicted) when the gate passes, and the unverifiable subjects. */
  log?: Logger | undefined;
  /** Name the caller in its lines by its SelfSubjectReview username (asked alongside the reviews). */
  nameCaller?: boolean | undefined;
  /**
   * Ask first whether the caller may do everything (cluster-admin): then it holds every access
   * check and may escalate and bind, and only subjects and dry runs are asked (one review, not ~50).
   */
  everythingFirst?: boolean | undefined;
}

export interface GateOutcome<N extends Need = Need> {
  /** Allowed every verb on every resource cluster-wide (asked only with everythingFirst). */
  holdsEverything: boolean;
  /** The missing checks that were not required, in order. */
  unmet: N[];
}

/** Every (verb, group, resource[/sub]) the rules grant, `pods/exec` split into resource and subresource, once each. */
export function expandRules(rules: readonly GrantedRule[], namespace: string | undefined): AccessCheck[] {
  const out = new Map<string, AccessCheck>();
  for (const r of rules)
    for (const group of r.apiGroups)
      for (const res of r.resources) {
        const [resource = res, subresource] = res.split("/");
        for (const verb of r.verbs) {
          const check: AccessCheck = { verb, group, resource, subresource, namespace };
          const key = checkKey(check);
          if (!out.has(key)) out.set(key, check);
        }
      }
  return [...out.values()];
}

/** The escalate and bind checks on a Grant's kind, in its namespace. */
export function escalateAndBind(grant: Pick<Grant, "kind" | "namespace">): AccessCheck[] {
  const resource = grant.kind === "Role" ? "roles" : "clusterroles";
  return ["escalate", "bind"].map((verb) => ({
    verb,
    group: RBAC_GROUP,
    resource,
    namespace: grant.namespace,
  }));
}

interface Findings<N> {
  lines: string[];
  hints: string[];
  notes: string[];
  unmet: N[];
}

interface Run {
  client: KubeClient;
  questions: Questions;
  holdsEverything: boolean;
  caller: Promise<string>;
  options: GateOptions;
}

type Probe = Promise<{ line?: string; note?: string }>;

/** The dry runs, sent at once: they need no answer about the caller. */
function sendDryRuns(run: Run, spec: GateSpec<Need>): Probe[] {
  const probes = (spec.dryRuns ?? []).map((d) => dryRun(run.client, run.questions, d));
  for (const p of probes) p.catch(() => {});
  return probes;
}

async function evaluate<N extends Need>(
  run: Run,
  spec: GateSpec<N>,
  probes: readonly Probe[] = sendDryRuns(run, spec),
): Promise<Findings<N>> {
  // The later part's read is already on its way while the reviews are asked.
  spec.later?.part.catch(() => {});
  const settled = run.holdsEverything;
  const access = settled ? [] : [...(spec.access ?? [])];
  const grants = settled
    ? []
    : (spec.grants ?? []).map((g) => ({ g, rules: expandRules(g.rules, g.namespace) }));
  const needs = settled ? [] : [...(spec.later?.needs ?? [])];
  const subjects = Promise.all(
    (spec.subjects ?? []).map((s) => subjectLines(run.questions, s, run.options.log)),
  );
  subjects.catch(() => {});
  // One wave for the caller's own questions: access, what each grant grants, escalate/bind, needs.
  await run.questions.answers([
    ...access,
    ...grants.flatMap(({ g, rules }) => [...rules, ...escalateAndBind(g)]),
    ...needs,
  ]);
  const out: Findings<N> = { lines: [], hints: [], notes: [], unmet: [] };
  const who = grants.length + access.length + needs.length > 0 ? await run.caller : CALLER;
  const denied = async <C extends AccessCheck>(checks: readonly C[]): Promise<C[]> => {
    const allowed = await Promise.all(checks.map((c) => run.questions.allowed(c)));
    return checks.filter((_, i) => !allowed[i]);
  };
  /** The line of a denied check, with the authorizer's reason when it gave one. */
  const missing = async (c: AccessCheck): Promise<string> =>
    describeMissing(c, { who, reason: (await run.questions.answer(c))?.reason });
  for (const n of await denied(access)) {
    if (n.required === false) {
      out.unmet.push(n);
      continue;
    }
    out.lines.push(await missing(n));
    if (n.hint) out.hints.push(n.hint);
  }
  for (const { g, rules } of grants) {
    const lacking = await denied(rules);
    if (lacking.length === 0 || (await denied(escalateAndBind(g))).length === 0) continue;
    out.lines.push(...lacking.map((c) => describeMissing(c, { who, grantedBy: g.grantedBy })));
    if (g.hint) out.hints.push(g.hint);
  }
  for (const [i, lines] of (await subjects).entries()) {
    out.lines.push(...lines);
    const hint = spec.subjects?.[i]?.hint;
    if (lines.length > 0 && hint) out.hints.push(hint);
  }
  for (const found of await Promise.all(probes)) {
    if (found.line) out.lines.push(found.line);
    if (found.note) out.notes.push(found.note);
  }
  const later = spec.later;
  if (!later) return out;
  const missingNeeds = await denied(needs);
  if (missingNeeds.length > 0) {
    // Which checks apply is not known: none of them is listed, and the remedy says so.
    out.lines.push(...(await Promise.all(missingNeeds.map(missing))));
    out.hints.push(later.unchecked);
    return out;
  }
  run.options.signal?.throwIfAborted();
  const rest = await evaluate(run, await later.part);
  return {
    lines: [...out.lines, ...rest.lines],
    hints: [...out.hints, ...rest.hints],
    notes: [...out.notes, ...rest.notes],
    unmet: [...out.unmet, ...rest.unmet],
  };
}

async function holdsEverything(questions: Questions): Promise<boolean> {
  try {
    const [answer] = await questions.answers([EVERYTHING]);
    return answer?.allowed === true;
  } catch (err) {
    // A refusal to answer is "not everything"; a server that cannot be reached fails the gate here.
    if (err instanceof AicrError && (err.code === "SERVICE_UNAVAILABLE" || err.code === "CANCELED"))
      throw err;
    return false;
  }
}

async function pass<N extends Need>(
  client: KubeClient,
  spec: GateSpec<N>,
  options: GateOptions,
): Promise<GateOutcome<N>> {
  options.signal?.throwIfAborted();
  const questions = new Questions(client, options.signal);
  const run: Run = { client, questions, holdsEverything: false, caller: Promise.resolve(CALLER), options };
  const probes = sendDryRuns(run, spec);
  if (options.everythingFirst) {
    run.holdsEverything = await holdsEverything(questions);
    options.signal?.throwIfAborted();
  }
  // Who the caller is goes out with the reviews (no round trip of its own); a server that will not
  // say (SelfSubjectReview refused or not served) leaves the generic wording.
  if (options.nameCaller && !run.holdsEverything)
    run.caller = client.whoAmI().then(callerNamed, () => CALLER);
  const found = await evaluate(run, spec, probes);
  const lines = [...new Set(found.lines)];
  const { refusal } = options;
  if (lines.length > 0)
    throw new AicrError("UNAUTHORIZED", refusal.message(lines), {
      remedy: [...new Set(found.hints)].join("; ") || refusal.remedy,
      context: refusal.context?.(lines) ?? { missing: lines },
    });
  for (const note of found.notes) options.log?.info(note);
  return { holdsEverything: run.holdsEverything, unmet: found.unmet };
}

/**
 * Asks everything `spec` states and passes, or throws one UNAUTHORIZED naming every gap: the caller's
 * missing permissions, each grant escalation prevention would refuse, each subject's missing rules,
 * each object admission would reject. A server that fails a review fails the gate with that error.
 */
export function passGate<N extends Need>(
  client: KubeClient,
  spec: GateSpec<N>,
  options: GateOptions,
): Promise<GateOutcome<N>> {
  const work = pass(client, spec, options);
  return options.signal ? unlessAborted(work, options.signal) : work;
}
