/**
 * Access reviews, asked one way for every permission gate: at most `concurrency` in flight, nothing new
 * after the first failure, each distinct question asked once, and one wording of a missing permission.
 * A review persists nothing.
 */
import { mapLimit } from "../core/async.ts";
import type { AccessAnswer, AccessCheck, KubeClient } from "./client.ts";

/** One question for the authorizer: may <subject> <verb> <group>/<resource>[/<sub>] [<name>] in <namespace | cluster>? */
export type { AccessAnswer, AccessCheck };

/** Whom a SubjectAccessReview asks about; without one, the caller asks about itself (SelfSubjectAccessReview). */
export interface ReviewSubject {
  user: string;
  groups: string[];
}

export interface ReviewOptions {
  /** Once aborted, no further review is sent (the signal's reason is thrown). */
  signal?: AbortSignal | undefined;
  /** Reviews in flight at most (default REVIEW_CONCURRENCY). */
  concurrency?: number | undefined;
  subject?: ReviewSubject | undefined;
}

export const REVIEW_CONCURRENCY = 16;

/** Two checks with the same key are the same question (the same check in another scope is not). */
export function checkKey(check: AccessCheck, subject?: ReviewSubject): string {
  return JSON.stringify([
    check.verb,
    check.group,
    check.resource,
    check.subresource ?? "",
    check.namespace ?? "",
    check.name ?? "",
    subject ? [subject.user, ...subject.groups] : null,
  ]);
}

const inFlight = new WeakMap<KubeClient, Map<string, Promise<AccessAnswer>>>();

/**
 * Single-flight: concurrent gates (or SDK calls) through one client ask each question once while it is
 * in flight and share the answer (the server would give them the same one at that instant). Nothing
 * is cached once the answer is in: a later run asks again.
 */
function ask(
  client: KubeClient,
  key: string,
  check: AccessCheck,
  subject?: ReviewSubject,
): Promise<AccessAnswer> {
  let pending = inFlight.get(client);
  if (!pending) {
    pending = new Map();
    inFlight.set(client, pending);
  }
  const shared = pending.get(key);
  if (shared) return shared;
  // Only the review's attributes go on the wire, whatever else a gate's check carries.
  const attributes: AccessCheck = { verb: check.verb, group: check.group, resource: check.resource };
  if (check.subresource) attributes.subresource = check.subresource;
  if (check.namespace) attributes.namespace = check.namespace;
  if (check.name) attributes.name = check.name;
  const asked = client.review(attributes, subject);
  const map = pending;
  map.set(key, asked);
  const forget = () => void map.delete(key);
  asked.then(forget, forget);
  return asked;
}

/**
 * The authorizer's answer to every check, in order. Identical checks are asked once; SubjectAccessReviews
 * when `subject` is given. The first failed review fails the call and nothing new is sent after it.
 */
export async function reviewAll(
  client: KubeClient,
  checks: readonly AccessCheck[],
  options: ReviewOptions = {},
): Promise<AccessAnswer[]> {
  const { subject } = options;
  const keys = checks.map((c) => checkKey(c, subject));
  const distinct = new Map<string, AccessCheck>();
  checks.forEach((c, i) => {
    const key = keys[i] as string;
    if (!distinct.has(key)) distinct.set(key, c);
  });
  const questions = [...distinct];
  const answers = await mapLimit(
    questions,
    options.concurrency ?? REVIEW_CONCURRENCY,
    ([key, check]) => ask(client, key, check, subject),
    options.signal,
  );
  const byKey = new Map(questions.map(([key], i) => [key, answers[i] as AccessAnswer]));
  return keys.map((key) => byKey.get(key) as AccessAnswer);
}

/** The checks the authorizer did not allow, in order (a gate's check keeps its own fields). */
export async function deniedChecks<C extends AccessCheck>(
  client: KubeClient,
  checks: readonly C[],
  options: ReviewOptions = {},
): Promise<C[]> {
  const answers = await reviewAll(client, checks, options);
  return checks.filter((_, i) => !answers[i]?.allowed);
}

/** Who is missing a permission when no one else is named: the identity the kubeconfig authenticates as. */
export const CALLER = "the caller (your kubeconfig identity)";

/**
 * The caller by the name the apiserver knows it by (a SelfSubjectReview's username), e.g.
 * `the caller "system:serviceaccount:demo:limited"`; CALLER when that name is unknown.
 */
export function callerNamed(username: string | undefined): string {
  return username ? `the caller ${JSON.stringify(username)}` : CALLER;
}

export interface MissingWording {
  /** Who lacks it (default CALLER), e.g. `agent ServiceAccount "system:serviceaccount:ns:name"`. */
  who?: string | undefined;
  /** The object the run creates that grants it, e.g. "the run's ClusterRole": then holding it is required. */
  grantedBy?: string | undefined;
  /** The authorizer's reason for the denial, when it gave one (a review's status.reason). */
  reason?: string | undefined;
}

/**
 * The one wording of a missing permission, for every gate — who, the verb quoted, the resource with its
 * subresource and group, the scope, then the authorizer's reason when it gave one:
 * `the caller (your kubeconfig identity) cannot "delete" jobs.batch "aicr" (namespace "gpu-operator")`,
 * `... cannot "get" pods/log (namespace "gpu"): RBAC: role.rbac.authorization.k8s.io "gone" not found`,
 * `... cannot "list" nodes (cluster-scoped), which the run's ClusterRole grants: creating it would be refused as privilege escalation`.
 */
export function describeMissing(check: AccessCheck, wording: MissingWording = {}): string {
  const resource = `${check.resource}${check.subresource ? `/${check.subresource}` : ""}${check.group ? `.${check.group}` : ""}`;
  const name = check.name ? ` ${JSON.stringify(check.name)}` : "";
  const where = check.namespace ? `namespace ${JSON.stringify(check.namespace)}` : "cluster-scoped";
  const line = `${wording.who ?? CALLER} cannot ${JSON.stringify(check.verb)} ${resource}${name} (${where})`;
  if (wording.grantedBy)
    return `${line}, which ${wording.grantedBy} grants: creating it would be refused as privilege escalation`;
  const reason = wording.reason?.trim();
  return reason ? `${line}: ${reason}` : line;
}
