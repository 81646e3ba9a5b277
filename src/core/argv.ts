/**
 * Every value of a repeatable flag, in order: citty keeps only the last one. Accepts `-n a`, `-n=a`,
 * `--namespace a`, `--namespace=a`; stops at `--`. A flag given last with no value yields "" so the
 * caller's validation names it. With `list`, comma lists (`-n a,b`) are split and duplicates dropped.
 */
export function repeatedFlag(
  argv: readonly string[],
  names: readonly string[],
  options: { list?: boolean } = {},
): string[] {
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
    if (!options.list) {
      values.push(value);
      continue;
    }
    for (const part of value.split(",")) {
      const v = part.trim();
      if (!values.includes(v)) values.push(v);
    }
  }
  return values;
}
