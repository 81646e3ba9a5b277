/**
 * A small, strict XML reader for nvidia-smi's output: elements, attributes, text, the five predefined
 * entities and numeric references, CDATA, comments, processing instructions and a DOCTYPE (skipped,
 * never expanded). Anything malformed throws with the offset, so a truncated dump is never half-read.
 */
export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const NAME = /[A-Za-z_:][-A-Za-z0-9_:.]*/y;
const ATTRIBUTE = /\s+([A-Za-z_:][-A-Za-z0-9_:.]*)\s*=\s*(?:"([^"<]*)"|'([^'<]*)')/y;
const ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };
const MAX_DEPTH = 64;

function fail(message: string, at: number): never {
  throw new Error(`malformed XML at offset ${at}: ${message}`);
}

function decode(raw: string, at: number): string {
  return raw.replace(/&([^;\s&]*);?/g, (match, body: string) => {
    if (!match.endsWith(";")) fail(`unterminated entity "${match}"`, at);
    if (body in ENTITIES) return ENTITIES[body] as string;
    const hex = /^#x([0-9a-fA-F]+)$/.exec(body);
    const dec = /^#([0-9]+)$/.exec(body);
    const code = hex
      ? Number.parseInt(hex[1] as string, 16)
      : dec
        ? Number.parseInt(dec[1] as string, 10)
        : Number.NaN;
    if (!Number.isFinite(code) || code > 0x10ffff) fail(`unknown entity "${match}"`, at);
    return String.fromCodePoint(code);
  });
}

function skipPast(text: string, from: number, terminator: string): number {
  const end = text.indexOf(terminator, from);
  if (end < 0) fail(`missing "${terminator}"`, from);
  return end + terminator.length;
}

function skipDoctype(text: string, from: number): number {
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    if (text[i] === "[") depth++;
    else if (text[i] === "]") depth--;
    else if (text[i] === ">" && depth === 0) return i + 1;
  }
  return fail("unterminated DOCTYPE", from);
}

function readName(text: string, at: number): string {
  NAME.lastIndex = at;
  const m = NAME.exec(text);
  if (!m) fail("expected an element name", at);
  return m[0];
}

/** Parses a whole document and returns its single root element. */
export function parseXml(text: string): XmlElement {
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const addText = (raw: string, at: number): void => {
    const top = stack[stack.length - 1];
    if (top) top.text += raw;
    else if (raw.trim() !== "") fail("text outside the root element", at);
  };
  while (i < text.length) {
    const lt = text.indexOf("<", i);
    if (lt < 0) {
      addText(text.slice(i), i);
      break;
    }
    if (lt > i) addText(decode(text.slice(i, lt), i), i);
    if (text.startsWith("<?", lt)) i = skipPast(text, lt, "?>");
    else if (text.startsWith("<!--", lt)) i = skipPast(text, lt, "-->");
    else if (text.startsWith("<![CDATA[", lt)) {
      const end = skipPast(text, lt, "]]>");
      addText(text.slice(lt + 9, end - 3), lt);
      i = end;
    } else if (text.startsWith("<!DOCTYPE", lt)) i = skipDoctype(text, lt);
    else if (text.startsWith("</", lt)) {
      const name = readName(text, lt + 2);
      const close = text.indexOf(">", lt);
      if (close < 0 || text.slice(lt + 2 + name.length, close).trim() !== "") fail("bad closing tag", lt);
      const open = stack.pop();
      if (!open || open.name !== name) fail(`</${name}> does not close <${open?.name ?? "nothing"}>`, lt);
      i = close + 1;
    } else {
      const name = readName(text, lt + 1);
      const element: XmlElement = { name, attributes: {}, children: [], text: "" };
      let j = lt + 1 + name.length;
      for (;;) {
        ATTRIBUTE.lastIndex = j;
        const m = ATTRIBUTE.exec(text);
        if (!m) break;
        element.attributes[m[1] as string] = decode(m[2] ?? m[3] ?? "", j);
        j = ATTRIBUTE.lastIndex;
      }
      while (/\s/.test(text[j] ?? "")) j++;
      const selfClosing = text.startsWith("/>", j);
      if (!selfClosing && text[j] !== ">") fail(`bad tag <${name}>`, lt);
      const parent = stack[stack.length - 1];
      if (parent) parent.children.push(element);
      else if (root) fail("more than one root element", lt);
      else root = element;
      if (!selfClosing) stack.push(element);
      if (stack.length > MAX_DEPTH) fail("elements nested too deeply", lt);
      i = j + (selfClosing ? 2 : 1);
    }
  }
  if (stack.length > 0) fail(`<${stack[stack.length - 1]?.name}> is never closed`, text.length);
  if (!root) fail("no root element", 0);
  return root;
}

/** Trimmed text of the first descendant reached by following `path` (element names). */
export function textAt(element: XmlElement, ...path: string[]): string | undefined {
  let current: XmlElement | undefined = element;
  for (const name of path) current = current?.children.find((c) => c.name === name);
  return current?.text.trim();
}
