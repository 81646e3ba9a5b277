/**
 * One YAML (or JSON) document as the operator's files are read: YAML 1.2, strictly, in linear time.
 * The `yaml` package's own duplicate-key check compares every key of a map with every other (40,000
 * keys took 13–37 s), so it is off, and duplicates are found here with one set per map. Errors are
 * thrown as the package throws them (`linePos`, `code`), so `yamlErrorAt` says where — never the
 * text, which the package's message quotes. Aliases are bounded by the package (100 per document).
 */
import { isMap, isScalar, LineCounter, parseDocument, visit } from "yaml";

/** A parse error: where and what, as the `yaml` package reports one. */
export class YamlDocumentError extends Error {
  constructor(
    readonly code: string,
    readonly linePos: [{ line: number; col: number }] | undefined,
  ) {
    super(`YAML ${code}${linePos ? ` at line ${linePos[0].line}, column ${linePos[0].col}` : ""}`);
    this.name = "YamlDocumentError";
  }
}

/** The document's value; a syntax error, several documents or a duplicate key is thrown. */
export function parseYamlDocument(text: string): unknown {
  const lines = new LineCounter();
  const doc = parseDocument(text, { uniqueKeys: false, lineCounter: lines, prettyErrors: false });
  const first = doc.errors[0];
  if (first) throw new YamlDocumentError(first.code, [lines.linePos(first.pos[0])]);
  let duplicate: number | undefined;
  visit(doc, {
    Map(_key, map) {
      if (!isMap(map)) return;
      const seen = new Set<string>();
      for (const item of map.items) {
        // Scalars compare by value and type, as the package's own check does; a key that is a
        // collection (rare; not in any aicr document) is not compared.
        if (!isScalar(item.key)) continue;
        const id = `${typeof item.key.value}:${String(item.key.value)}`;
        if (seen.has(id)) {
          duplicate = item.key.range?.[0] ?? 0;
          return visit.BREAK;
        }
        seen.add(id);
      }
      return undefined;
    },
  });
  if (duplicate !== undefined) throw new YamlDocumentError("DUPLICATE_KEY", [lines.linePos(duplicate)]);
  return doc.toJS({ maxAliasCount: 100 });
}
