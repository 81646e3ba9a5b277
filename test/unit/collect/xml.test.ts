import { describe, expect, test } from "bun:test";
import { parseXml, textAt } from "../../../src/collect/_xml.ts";

describe("parseXml", () => {
  test("elements, attributes, nested text, prolog, DOCTYPE and comments", () => {
    const root = parseXml(
      '\ufeff<?xml version="1.0" ?>\n<!DOCTYPE log SYSTEM "x.dtd" [ <!ENTITY e "no"> ]>\n<!-- c -->\n' +
        '<log a="1" b=\'two\'><gpu id="00:01"><name> H100 </name><empty/><e2 /></gpu></log>\n',
    );
    expect(root.name).toBe("log");
    expect(root.attributes).toEqual({ a: "1", b: "two" });
    expect(root.children[0]?.attributes.id).toBe("00:01");
    expect(textAt(root, "gpu", "name")).toBe("H100");
    expect(textAt(root, "gpu", "empty")).toBe("");
    expect(textAt(root, "gpu", "missing")).toBeUndefined();
  });

  test("entities, character references and CDATA are decoded", () => {
    const root = parseXml(
      "<r><a>&lt;x&gt; &amp; &quot;q&quot; &apos;&#65;&#x42;</a><b><![CDATA[<raw> & ]]></b></r>",
    );
    expect(textAt(root, "a")).toBe('<x> & "q" \'AB');
    expect(textAt(root, "b")).toBe("<raw> &");
  });

  test.each([
    ["truncated document", "<log><gpu><name>H100</name>"],
    ["cut inside a tag", "<log><gpu_part"],
    ["mismatched close", "<log><a></b></log>"],
    ["two roots", "<a/><b/>"],
    ["text outside the root", "<a/>junk"],
    ["unknown entity", "<a>&nbsp;</a>"],
    ["bare ampersand", "<a>fish & chips</a>"],
    ["unquoted attribute", "<a id=1></a>"],
    ["empty input", ""],
    ["unterminated comment", "<a><!-- </a>"],
  ])("rejects %s", (_name, xml) => {
    expect(() => parseXml(xml)).toThrow(/malformed XML/);
  });
});
