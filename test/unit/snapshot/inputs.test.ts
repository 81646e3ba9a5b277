import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadTemplate, PROVIDER_MAX_BYTES, readProviderDumps } from "../../../src/snapshot/inputs.ts";
import { thrown } from "../../support/reject.ts";

const dir = mkdtempSync(join(tmpdir(), "aicr-inputs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FIXTURE = join(import.meta.dir, "../../fixtures/providers/gke-gpu-pools.json");

function code(fn: () => unknown): string {
  const err = thrown(fn);
  return `${err.code}: ${err.message}`;
}

describe("provider files", () => {
  test("a symlink to a regular file is followed", () => {
    const link = join(dir, "link.json");
    symlinkSync(FIXTURE, link);
    expect(readProviderDumps({ "gke-gpu-pools": link })[0]?.subtype).toBe("gke-gpu-pools");
  });

  test("directory, missing, oversized: INVALID_REQUEST naming the flag", () => {
    const big = join(dir, "big.json");
    writeFileSync(big, `[${" ".repeat(PROVIDER_MAX_BYTES)}]`);
    expect(code(() => readProviderDumps({ "oke-addons": dir }))).toMatch(
      /^INVALID_REQUEST: .*--oke-addons.*a directory/,
    );
    expect(code(() => readProviderDumps({ "aks-gpu-pools": join(dir, "none") }))).toMatch(/no such file/);
    expect(code(() => readProviderDumps({ "gke-gpu-pools": big }))).toMatch(
      /1048578 bytes, above the 1 MiB limit/,
    );
  });

  test("the template file is read and parsed", () => {
    const t = join(dir, "t.tmpl");
    writeFileSync(t, "{{ .kind }}");
    expect(loadTemplate(t).nodes.length).toBe(1);
    writeFileSync(t, "{{ if }}");
    expect(code(() => loadTemplate(t))).toMatch(/INVALID_REQUEST: invalid --template .* line 1, column 1/);
  });
});
