/**
 * `WWW-Authenticate` parsing (RFC 7235 auth-params, quoted strings may hold commas, as Bearer
 * scopes do: `scope="repository:a:pull,push"`). Pure.
 */

export interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

/** The first challenge the header offers (registries send one). */
export function parseChallenge(header: string | null): Challenge | undefined {
  if (!header) return undefined;
  const m = /^\s*([A-Za-z][\w-]*)\s*(.*)$/s.exec(header);
  if (!m) return undefined;
  const scheme = m[1]!.toLowerCase();
  const params: Record<string, string> = {};
  const rest = m[2] ?? "";
  const param = /\s*([\w-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?/gy;
  let hit: RegExpExecArray | null = param.exec(rest);
  while (hit) {
    params[hit[1]!.toLowerCase()] = hit[2] !== undefined ? hit[2].replace(/\\(.)/g, "$1") : (hit[3] ?? "");
    hit = param.lastIndex < rest.length ? param.exec(rest) : null;
  }
  return { scheme, params };
}

/** The scopes a challenge asks for, one per space-separated entry. */
export const challengeScopes = (c: Challenge): string[] => (c.params.scope ?? "").split(" ").filter(Boolean);

/** `repository:a:pull` + `repository:a:push` → `repository:a:pull,push`: one scope per resource, sorted. */
export function mergeScopes(scopes: Iterable<string>): string[] {
  const actions = new Map<string, Set<string>>();
  for (const scope of scopes) {
    const at = scope.lastIndexOf(":");
    const resource = at > 0 ? scope.slice(0, at) : scope;
    const set = actions.get(resource) ?? new Set<string>();
    for (const a of at > 0 ? scope.slice(at + 1).split(",") : []) if (a) set.add(a);
    actions.set(resource, set);
  }
  return [...actions]
    .map(([resource, set]) => (set.size ? `${resource}:${[...set].sort().join(",")}` : resource))
    .sort();
}
