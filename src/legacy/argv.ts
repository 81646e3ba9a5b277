/**
 * Every value of a repeatable flag, in order and without duplicates: citty keeps only the last one.
 * Accepts `-n a`, `-n=a`, `--namespace a`, `--namespace=a` and comma lists (`-n a,b`); stops at `--`.
 * Pure: the caller passes the raw arguments (the command's rawArgs).
 */
export function repeatedFlag(argv: readonly string[], names: readonly string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "--") break;
    let value: string | undefined;
    if (names.includes(arg)) {
      value = argv[i + 1] ?? "";
      i++;
    } else {
      const eq = arg.indexOf("=");
      if (eq > 0 && names.includes(arg.slice(0, eq))) value = arg.slice(eq + 1);
    }
    if (value === undefined) continue;
    for (const part of value.split(",")) {
      const v = part.trim();
      if (!values.includes(v)) values.push(v);
    }
  }
  return values;
}
