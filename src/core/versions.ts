/**
 * Version-looking values: one parse and one comparison for everything that reads readings as
 * versions (validate's constraints, diff's equality). Pure.
 */

export interface Version {
  /** One to three numeric components. */
  parts: number[];
  /** A `-pre` or `+build` suffix, kept aside: it never takes part in an ordering. */
  suffix: string;
}

const VERSION = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?([-+].*)?$/;

/** `v1.33.4-eks-3025e55`, `24.04`, `300`; an optional leading `v`; undefined for anything else. */
export function parseVersion(text: string): Version | undefined {
  const m = VERSION.exec(text.trim());
  if (!m) return undefined;
  const parts = [m[1], m[2], m[3]].filter((p): p is string => p !== undefined).map(Number);
  return { parts, suffix: m[4] ?? "" };
}

/** Compares only as many components as the less precise side has: `1.32` vs `1.32.9` is equal. */
export function compareVersions(a: Version, b: Version): number {
  const n = Math.min(a.parts.length, b.parts.length);
  for (let i = 0; i < n; i++) {
    const d = (a.parts[i] ?? 0) - (b.parts[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

/**
 * The same version written differently (`v1.33.4` and `1.33.4`, `1.33` and `1.33.0`): all three
 * components equal (a missing one reads 0) and the same suffix. Stricter than compareVersions, which
 * a constraint uses to ask "at least 1.32"; a drift check must still see `1.33` → `1.33.4`.
 */
export function sameVersion(a: Version, b: Version): boolean {
  for (let i = 0; i < 3; i++) if ((a.parts[i] ?? 0) !== (b.parts[i] ?? 0)) return false;
  return a.suffix === b.suffix;
}
