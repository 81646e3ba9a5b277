import { AicrError } from "../core/errors.ts";

/**
 * --ignore patterns over reading paths (pure): `*` matches within one dot-separated segment, `**`
 * across segments (any run of characters); every other character, `[` and `]` included, is literal.
 * A pattern matches a whole path: `K8s.image.**` ignores every image, `**.items.length` every count.
 */
export interface Glob {
  /** The pattern as given. */
  readonly source: string;
  /** Whether the whole path matches. */
  test(path: string): boolean;
}

/** `*` (within a segment), `**` (across segments) or one literal character. */
type Token = "*" | "**" | { char: string };

/**
 * Matching runs the pattern as a set of positions over the path, one character at a time: time is
 * at most the path's length times the pattern's, whatever the pattern (a regex with several `.*`
 * backtracks: `**a**a**…b` over a long key took 40 s).
 */
export function compileGlob(pattern: string): Glob {
  if (pattern.trim() === "") {
    throw new AicrError("INVALID_REQUEST", 'invalid --ignore "": expected a reading-path glob', {
      remedy: "pass a path such as K8s.image.** or OS.sysctl./proc/sys/kernel/*",
      context: { field: "--ignore", value: pattern },
    });
  }
  const tokens: Token[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] ?? "";
    if (c === "*" && pattern[i + 1] === "*") {
      // a run of stars that holds `**` is one `**`
      while (pattern[i + 1] === "*") i++;
      if (tokens.at(-1) === "*") tokens.pop();
      if (tokens.at(-1) !== "**") tokens.push("**");
    } else if (c === "*") {
      if (tokens.at(-1) !== "*" && tokens.at(-1) !== "**") tokens.push("*");
    } else tokens.push({ char: c });
  }
  const n = tokens.length;
  // Positions reachable without reading a character: a star may match nothing.
  const close = (set: Uint8Array): void => {
    for (let t = 0; t < n; t++) if (set[t] && typeof tokens[t] === "string") set[t + 1] = 1;
  };
  return {
    source: pattern,
    test(path: string): boolean {
      let cur = new Uint8Array(n + 1);
      cur[0] = 1;
      close(cur);
      for (const c of path) {
        const next = new Uint8Array(n + 1);
        let any = false;
        for (let t = 0; t < n; t++) {
          if (!cur[t]) continue;
          const token = tokens[t] as Token;
          if (token === "**" || (token === "*" && c !== ".")) next[t] = 1;
          else if (typeof token === "object" && token.char === c) next[t + 1] = 1;
          else continue;
          any = true;
        }
        if (!any) return false;
        close(next);
        cur = next;
      }
      return cur[n] === 1;
    },
  };
}

/** One predicate for every --ignore given. */
export function ignoreMatcher(patterns: readonly string[]): (path: string) => boolean {
  const compiled = patterns.map(compileGlob);
  return (path) => compiled.some((glob) => glob.test(path));
}
