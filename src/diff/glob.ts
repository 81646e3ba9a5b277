import { AicrError } from "../core/errors.ts";

/**
 * --ignore patterns over reading paths (pure): `*` matches within one dot-separated segment, `**`
 * across segments (any run of characters); every other character, `[` and `]` included, is literal.
 * A pattern matches a whole path: `K8s.image.**` ignores every image, `**.items.length` every count.
 */
export function compileGlob(pattern: string): RegExp {
  if (pattern.trim() === "") {
    throw new AicrError("INVALID_REQUEST", 'invalid --ignore "": expected a reading-path glob', {
      remedy: "pass a path such as K8s.image.** or OS.sysctl./proc/sys/kernel/*",
      context: { field: "--ignore", value: pattern },
    });
  }
  let re = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] ?? "";
    if (c === "*" && pattern[i + 1] === "*") {
      re += ".*";
      i++;
    } else if (c === "*") re += "[^.]*";
    else re += c.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

/** One predicate for every --ignore given. */
export function ignoreMatcher(patterns: readonly string[]): (path: string) => boolean {
  const compiled = patterns.map(compileGlob);
  return (path) => compiled.some((re) => re.test(path));
}
