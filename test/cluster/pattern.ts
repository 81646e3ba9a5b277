/** Path patterns for faults and the request log: `*` matches one segment, `**` any number. */
export type PathPattern = string | RegExp;

export function pathMatches(pattern: PathPattern, path: string): boolean {
  if (pattern instanceof RegExp) return pattern.test(path);
  const re = pattern
    .split("/")
    .map((seg) => (seg === "**" ? ".*" : seg.split("*").map(escapeRegExp).join("[^/]*")))
    .join("/");
  return new RegExp(`^${re}/?$`).test(path);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
}
