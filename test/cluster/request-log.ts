/** The request log: one entry per request, with helpers tests use to assert what a client did. */
import { type PathPattern, pathMatches } from "./pattern.ts";
import { MUTATING_VERBS } from "./request-info.ts";

export interface LoggedRequest {
  seq: number;
  user: string;
  groups: string[];
  verb: string;
  method: string;
  path: string;
  query: Record<string, string>;
  body?: unknown;
  status: number;
  /** Set when a fault changed the answer (status, drop, cut, gone). */
  fault?: string;
}

export class RequestLog {
  readonly entries: LoggedRequest[] = [];
  private seq = 0;
  private readonly waiters = new Set<{
    match: (e: LoggedRequest) => boolean;
    resolve: (e: LoggedRequest) => void;
  }>();

  record(e: Omit<LoggedRequest, "seq">): LoggedRequest {
    const entry = { seq: ++this.seq, ...e };
    this.entries.push(entry);
    for (const w of this.waiters) {
      if (!w.match(entry)) continue;
      this.waiters.delete(w);
      w.resolve(entry);
    }
    return entry;
  }

  /** Resolves with the first logged request (already logged or future) that matches. */
  waitFor(match: (e: LoggedRequest) => boolean): Promise<LoggedRequest> {
    const seen = this.entries.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.add({ match, resolve }));
  }

  clear(): void {
    this.entries.length = 0;
  }

  mutatingRequests(): LoggedRequest[] {
    return this.entries.filter((e) => MUTATING_VERBS.has(e.verb));
  }

  noMutatingRequest(): boolean {
    return this.mutatingRequests().length === 0;
  }

  requestsOn(pattern: PathPattern, method?: string): LoggedRequest[] {
    return this.entries.filter((e) => pathMatches(pattern, e.path) && (!method || e.method === method));
  }

  byUser(username: string): LoggedRequest[] {
    return this.entries.filter((e) => e.user === username);
  }

  /** Compact lines like "POST /api/v1/namespaces/x/configmaps 201" for failure messages. */
  summary(): string[] {
    return this.entries.map((e) => `${e.method} ${e.path} ${e.status}${e.fault ? ` (${e.fault})` : ""}`);
  }
}
