/**
 * What the gate (gate.ts) asks the apiserver: each distinct access review once per gate run, a named
 * subject's reviews, and the admission dry runs. Reviews and dry runs persist nothing.
 */
import type { Logger } from "../core/log.ts";
import { knownResource } from "./_known-kinds.ts";
import type { KubeClient, KubeObject } from "./client.ts";
import {
  isBadRequest,
  isForbidden,
  isInvalid,
  isMethodNotSupported,
  isNotFound,
  isUnauthorized,
} from "./errors.ts";
import {
  type AccessAnswer,
  type AccessCheck,
  checkKey,
  describeMissing,
  type ReviewSubject,
  reviewAll,
} from "./reviews.ts";

/** Checks a named subject (an existing ServiceAccount) must already hold: SubjectAccessReviews. */
export interface SubjectNeed {
  subject: ReviewSubject;
  checks: readonly AccessCheck[];
  /** Who lacks them, as the refusal says: `agent ServiceAccount "system:serviceaccount:ns:sa"`. */
  who: string;
  hint?: string | undefined;
  /** The caller may not ask (SubjectAccessReview refused or not served): warned, and the gate goes on. */
  unverifiable: { message: string; fields: Record<string, unknown> };
}

/** An object created with dryRun=All: admission (Pod Security, webhooks) answers now, not later. */
export interface DryRun {
  object: KubeObject;
  /** How a refusal names it: "the agent pod". */
  what: string;
  /** The namespace's read (the object, or the error it answered), when the caller already sent it. */
  namespaceRead?: Promise<unknown> | undefined;
}

/** One gate run's questions: each distinct one (per subject) asked once, whichever part asks it. */
export class Questions {
  private readonly asked = new Map<string, Promise<AccessAnswer>>();
  constructor(
    private readonly client: KubeClient,
    private readonly signal: AbortSignal | undefined,
  ) {}

  async answers(checks: readonly AccessCheck[], subject?: ReviewSubject): Promise<AccessAnswer[]> {
    const fresh = new Map<string, AccessCheck>();
    for (const c of checks) {
      const key = checkKey(c, subject);
      if (!this.asked.has(key) && !fresh.has(key)) fresh.set(key, c);
    }
    if (fresh.size > 0) {
      const wave = reviewAll(this.client, [...fresh.values()], { signal: this.signal, subject });
      [...fresh.keys()].forEach((key, i) => {
        const answer = wave.then((a) => a[i] as AccessAnswer);
        answer.catch(() => {});
        this.asked.set(key, answer);
      });
    }
    return Promise.all(checks.map((c) => this.asked.get(checkKey(c, subject)) as Promise<AccessAnswer>));
  }

  /** Allowed, by the answer already in (false when unasked). */
  async allowed(check: AccessCheck): Promise<boolean> {
    return (await this.answer(check))?.allowed === true;
  }

  /** The answer already in for the caller's own check (allowed and the authorizer's reason), if asked. */
  answer(check: AccessCheck): Promise<AccessAnswer> | undefined {
    return this.asked.get(checkKey(check));
  }
}

/** Admission predicted by a server-side dry run; a line when it would be refused, else maybe a note. */
export async function dryRun(
  client: KubeClient,
  questions: Questions,
  d: DryRun,
): Promise<{ line?: string; note?: string }> {
  const { apiVersion = "v1", kind = "", metadata } = d.object;
  const namespace = metadata?.namespace ?? "";
  const resource = knownResource(apiVersion, kind)?.plural ?? `${kind.toLowerCase()}s`;
  const group = apiVersion.includes("/") ? (apiVersion.split("/")[0] ?? "") : "";
  // One wave: the dry run goes out alongside the questions that decide whether its answer counts.
  const [ns, [may], refused] = await Promise.all([
    d.namespaceRead ??
      client.get({ apiVersion: "v1", kind: "Namespace", name: namespace }).catch((err: unknown) => err),
    questions.answers([{ verb: "create", group, resource, namespace }]),
    client.create(d.object, { dryRun: true }).then(
      () => undefined,
      (err: unknown) => err,
    ),
  ]);
  if (isNotFound(ns))
    return { note: `admission was not predicted: namespace ${namespace} does not exist yet` };
  if (!may?.allowed)
    return {
      note: `admission was not predicted: the caller may not create ${resource}, so it cannot dry-run one`,
    };
  if (refused === undefined) return {};
  const message = (refused as Error).message;
  if (isForbidden(refused) || isInvalid(refused) || isBadRequest(refused))
    return {
      line: `${d.what} would be rejected by admission in namespace "${namespace}": ${message.replace(/^creating [^:]*: /, "")}`,
    };
  return { note: `admission was not predicted: ${message}` };
}

/** A subject's missing checks, or none when the caller may not ask (warned). */
export async function subjectLines(
  questions: Questions,
  s: SubjectNeed,
  log: Logger | undefined,
): Promise<string[]> {
  try {
    const answers = await questions.answers(s.checks, s.subject);
    return s.checks.flatMap((c, i) =>
      answers[i]?.allowed ? [] : [describeMissing(c, { who: s.who, reason: answers[i]?.reason })],
    );
  } catch (err) {
    if (!isForbidden(err) && !isUnauthorized(err) && !isNotFound(err) && !isMethodNotSupported(err))
      throw err;
    log?.warn(s.unverifiable.message, s.unverifiable.fields);
    return [];
  }
}
