import { visible } from "../core/terminal.ts";
import type { Readings, Snapshot } from "./schema.ts";

/**
 * `-t table`: the snapshot as FIELD/VALUE rows (pure). Metadata first (`metadata.<key>`), then one
 * row per reading, `<Type>.<subtype>.<key>`; a subtype's context as `<Type>.<subtype>.context.<key>`
 * and its items as `<Type>.<subtype>.items[<i>].<key>` (and `.items[<i>].context.<key>`). Fields and
 * values are made visible (core/terminal.ts: line breaks, tabs, backslashes and every character a
 * terminal would obey escaped), so each reading is one line. For reading, not for reading back.
 */
export function renderTable(doc: Snapshot): string {
  const rows: [string, string][] = [];
  for (const [key, value] of Object.entries(doc.metadata)) rows.push([`metadata.${key}`, value]);
  const add = (prefix: string, data: Readings | Record<string, string>) => {
    for (const [key, value] of Object.entries(data)) rows.push([`${prefix}.${key}`, String(value)]);
  };
  for (const m of doc.measurements) {
    for (const s of m.subtypes) {
      const base = `${m.type}.${s.subtype}`;
      add(base, s.data);
      if (s.context) add(`${base}.context`, s.context);
      s.items?.forEach((item, i) => {
        add(`${base}.items[${i}]`, item.data);
        if (item.context) add(`${base}.items[${i}].context`, item.context);
      });
    }
  }
  const shown = rows.map(([field, value]): [string, string] => [visible(field), visible(value)]);
  const width = Math.max("FIELD".length, ...shown.map(([field]) => field.length));
  const line = (field: string, value: string) => `${field.padEnd(width)}  ${value}`.trimEnd();
  return `${[line("FIELD", "VALUE"), ...shown.map(([f, v]) => line(f, v))].join("\n")}\n`;
}
