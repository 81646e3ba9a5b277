/** readCaFile: a --ca-file's PEM certificates through the bounded reader, each one parsed. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { INPUT_LIMITS, type InputSpec, readCaFile } from "../../../src/core/input-file.ts";
import { pki, signedBy } from "../../cluster/certs.ts";
import { thrown } from "../../support/reject.ts";

const SPEC: InputSpec = { flag: "--ca-file", what: "a PEM CA certificate", maxBytes: INPUT_LIMITS.pem };
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "aicr-ca-file-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe("readCaFile", () => {
  test("one certificate, and a bundle with comments between certificates, read as they are", () => {
    const one = pki().caCert;
    expect(readCaFile(file("one.pem", one), SPEC)).toBe(one);
    const bundle = `# corporate roots\n${one}\n# another\n${signedBy.frontProxy().ca}`;
    expect(readCaFile(file("bundle.pem", bundle), SPEC)).toBe(bundle);
  });

  test("no certificate, a damaged one, and a file the bounded reader refuses: INVALID_REQUEST", () => {
    const none = thrown(() => readCaFile(file("key.pem", pki().caKey), SPEC));
    expect(none.code).toBe("INVALID_REQUEST");
    expect(none.message).toBe(`--ca-file ${JSON.stringify(join(dir, "key.pem"))} holds no PEM certificate`);
    expect(JSON.stringify([none.message, none.remedy])).not.toContain("PRIVATE KEY");
    const damaged = `${pki().caCert}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`;
    expect(thrown(() => readCaFile(file("damaged.pem", damaged), SPEC)).message).toContain(
      "holds a damaged certificate (PEM block 2 of 2 is not X.509)",
    );
    expect(thrown(() => readCaFile(dir, SPEC)).message).toContain("a directory, not a regular file");
    expect(thrown(() => readCaFile(join(dir, "missing.pem"), SPEC)).message).toContain("no such file");
  });
});
