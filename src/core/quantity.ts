/** Kubernetes resource quantities ("500m", "8Gi", "1e3") as numbers, for comparing two of them. */

const SUFFIX: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** The value of a quantity in base units; NaN for a string that is not one. */
export function quantityValue(q: string): number {
  const m = /^\+?([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:([eE][+-]?[0-9]+)|([KMGTPE]i|[numkMGTPE])?)$/.exec(
    q.trim(),
  );
  if (!m) return Number.NaN;
  const base = Number(m[1]);
  if (m[2]) return base * 10 ** Number(m[2].slice(1));
  return base * (SUFFIX[m[3] ?? ""] ?? Number.NaN);
}
