/**
 * Fault injection, per request. A rule selects requests by method and path pattern and fires on
 * the `nth` matching request (1-based; 0 = every one) for `count` requests.
 *
 *   cluster.faults.add({ method: "POST", path: "/api/v1/namespaces/*\/configmaps", status: 429, retryAfterSeconds: 1 })
 *   cluster.faults.add({ method: "POST", path: "...", dropAfterCommit: true })   // the lost create response
 *   cluster.faults.add({ path: "...", latencyMs: 200 })
 *   cluster.faults.add({ path: "...", holdUntil: somePromise })                  // answered only after it
 *   cluster.faults.add({ path: "...", cutWatchAfterEvents: 2 })
 *   cluster.faults.add({ path: "...", watchGoneOnResume: true })
 */
import { type PathPattern, pathMatches } from "./pattern.ts";

export interface FaultEffect {
  /** Answer with this status (a Status body) without processing the request. */
  status?: number;
  retryAfterSeconds?: number;
  message?: string;
  /** Delay before the request is processed. */
  latencyMs?: number;
  /** Hold the request, unprocessed, until this settles: orders a request after a cluster event without timing. */
  holdUntil?: Promise<unknown>;
  /** Process the request, then reset the connection instead of answering. */
  dropAfterCommit?: boolean;
  /** End a watch response after this many events. */
  cutWatchAfterEvents?: number;
  /** A watch that resumes from a resourceVersion gets the apiserver's 410 Expired ERROR event. */
  watchGoneOnResume?: boolean;
}

export interface FaultRule extends FaultEffect {
  method?: string;
  path: PathPattern;
  /** Which matching request fires first (1-based); 0 fires on every match. Default 1. */
  nth?: number;
  /** How many requests fire from then on. Default 1 (ignored when nth is 0). */
  count?: number;
}

export interface Fault {
  readonly rule: FaultRule;
  /** Requests that matched the selector so far. */
  matched: number;
  /** Requests the fault actually fired on. */
  fired: number;
  remove(): void;
}

export class Faults {
  private readonly rules: Fault[] = [];

  add(rule: FaultRule): Fault {
    const fault: Fault = {
      rule,
      matched: 0,
      fired: 0,
      remove: () => {
        const i = this.rules.indexOf(fault);
        if (i >= 0) this.rules.splice(i, 1);
      },
    };
    this.rules.push(fault);
    return fault;
  }

  clear(): void {
    this.rules.length = 0;
  }

  /** Effects to apply to this request (counts the match). */
  take(method: string, path: string, applies: (f: FaultEffect) => boolean = () => true): FaultEffect[] {
    const out: FaultEffect[] = [];
    for (const f of this.rules) {
      const r = f.rule;
      if (r.method && r.method.toUpperCase() !== method) continue;
      if (!pathMatches(r.path, path) || !applies(r)) continue;
      f.matched++;
      const nth = r.nth ?? 1;
      const fires = nth === 0 || (f.matched >= nth && f.fired < (r.count ?? 1));
      if (!fires) continue;
      f.fired++;
      out.push(r);
    }
    return out;
  }
}

export function mergeEffects(effects: FaultEffect[]): FaultEffect {
  return Object.assign({}, ...effects);
}
