/**
 * SPDX licence expressions as npm packages declare them, checked before they go into an SBOM: the
 * syntax of SPDX 2.3 Annex D (AND, OR, WITH, parentheses, `+`, LicenseRef-) over licence ids from
 * the SPDX licence list (the ones npm packages use; an id not listed here is not passed on). Pure.
 */

/** SPDX licence list ids (canonical case), including deprecated ones still found in package.json files. */
const IDS = [
  "0BSD",
  "AFL-2.1",
  "AFL-3.0",
  "AGPL-3.0",
  "AGPL-3.0-only",
  "AGPL-3.0-or-later",
  "Apache-1.1",
  "Apache-2.0",
  "APSL-2.0",
  "Artistic-1.0",
  "Artistic-2.0",
  "BlueOak-1.0.0",
  "BSD-1-Clause",
  "BSD-2-Clause",
  "BSD-3-Clause",
  "BSD-3-Clause-Clear",
  "BSD-4-Clause",
  "BSL-1.0",
  "CC-BY-3.0",
  "CC-BY-4.0",
  "CC-BY-SA-3.0",
  "CC-BY-SA-4.0",
  "CC0-1.0",
  "CDDL-1.0",
  "CDDL-1.1",
  "EPL-1.0",
  "EPL-2.0",
  "EUPL-1.2",
  "GPL-2.0",
  "GPL-2.0-only",
  "GPL-2.0-or-later",
  "GPL-3.0",
  "GPL-3.0-only",
  "GPL-3.0-or-later",
  "ISC",
  "LGPL-2.0",
  "LGPL-2.0-only",
  "LGPL-2.0-or-later",
  "LGPL-2.1",
  "LGPL-2.1-only",
  "LGPL-2.1-or-later",
  "LGPL-3.0",
  "LGPL-3.0-only",
  "LGPL-3.0-or-later",
  "MIT",
  "MIT-0",
  "MPL-1.1",
  "MPL-2.0",
  "MS-PL",
  "NCSA",
  "ODC-By-1.0",
  "OFL-1.1",
  "PostgreSQL",
  "Python-2.0",
  "Ruby",
  "Unicode-3.0",
  "Unicode-DFS-2016",
  "Unlicense",
  "UPL-1.0",
  "W3C",
  "WTFPL",
  "X11",
  "Zlib",
  "ZPL-2.1",
];
const EXCEPTIONS = ["Classpath-exception-2.0", "GCC-exception-3.1", "LLVM-exception"];

const canonical = (list: string[]): Map<string, string> => new Map(list.map((id) => [id.toLowerCase(), id]));
const LICENSES = canonical(IDS);
const LICENSE_EXCEPTIONS = canonical(EXCEPTIONS);
const REF = /^(DocumentRef-[A-Za-z0-9.-]+:)?LicenseRef-[A-Za-z0-9.-]+$/;

/**
 * The expression with its ids in canonical case, or undefined when it is not a valid SPDX expression
 * over known ids (the SBOM then says NOASSERTION).
 */
export function spdxExpression(text: string | undefined): string | undefined {
  if (typeof text !== "string") return undefined;
  const tokens = text.match(/\(|\)|[^\s()]+/g) ?? [];
  let at = 0;
  const out: string[] = [];
  const peek = (): string | undefined => tokens[at];

  const atom = (): boolean => {
    const token = tokens[at++];
    if (token === undefined) return false;
    if (token === "(") {
      out.push("(");
      if (!expression() || tokens[at++] !== ")") return false;
      out.push(")");
      return true;
    }
    if (REF.test(token)) {
      out.push(token);
      return true;
    }
    const plus = token.endsWith("+");
    const id = LICENSES.get((plus ? token.slice(0, -1) : token).toLowerCase());
    if (!id) return false;
    out.push(plus ? `${id}+` : id);
    if (peek() !== "WITH") return true;
    at++;
    const exception = LICENSE_EXCEPTIONS.get(String(tokens[at++]).toLowerCase());
    if (!exception) return false;
    out.push("WITH", exception);
    return true;
  };
  const chain = (operator: string, operand: () => boolean): boolean => {
    if (!operand()) return false;
    while (peek() === operator) {
      out.push(tokens[at++]!);
      if (!operand()) return false;
    }
    return true;
  };
  const conjunction = (): boolean => chain("AND", atom);
  const expression = (): boolean => chain("OR", conjunction);

  if (tokens.length === 0 || !expression() || at !== tokens.length) return undefined;
  return out.join(" ").replaceAll("( ", "(").replaceAll(" )", ")");
}
