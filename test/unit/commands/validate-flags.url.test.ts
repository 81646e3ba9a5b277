/** validate -r/-s https:// and --ca-file, resolved before any file read or request. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveValidateOptions, type ValidateFlags } from "../../../src/commands/_validate-flags.ts";
import { pki } from "../../cluster/certs.ts";
import { thrown } from "../../support/reject.ts";

let dir: string;
let caFile: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "aicr-validate-url-"));
  caFile = join(dir, "ca.pem");
  writeFileSync(caFile, pki().caCert);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const resolve = (f: Partial<ValidateFlags>) =>
  resolveValidateOptions({ phases: [], skipChecks: [], recipe: "recipe.yaml", ...f }, {}, false);

describe("validate https:// sources", () => {
  test("-r and -s as https:// URLs; --ca-file read now", () => {
    const o = resolve({
      recipe: "https://recipes.example.com/h100.yaml",
      snapshot: "https://snapshots.example.com/node.yaml?token=s3cret",
      noCluster: true,
      caFile,
    });
    expect(o.recipe.kind).toBe("url");
    expect(o.snapshot?.kind).toBe("url");
    expect(o.ca).toBe(pki().caCert);
  });

  test("http:// and user:password@ are refused with the flag named (exit 2)", () => {
    const plain = thrown(() => resolve({ recipe: "http://recipes.example.com/h100.yaml" }));
    expect(plain.code).toBe("INVALID_REQUEST");
    expect(plain.message).toStartWith(
      '--recipe "http://recipes.example.com/h100.yaml": plain http:// is refused',
    );
    const creds = thrown(() =>
      resolve({ recipe: "r.yaml", snapshot: "https://u:s3cret@example.com/s.yaml", noCluster: true }),
    );
    expect(creds.message).toStartWith('--snapshot "https://***@example.com/s.yaml": credentials in a URL');
    expect(JSON.stringify([creds.message, creds.remedy, creds.context])).not.toContain("s3cret");
  });

  test("--ca-file without an https:// source is refused; an unreadable one is refused before any request", () => {
    const alone = thrown(() => resolve({ recipe: "r.yaml", snapshot: "s.yaml", noCluster: true, caFile }));
    expect(alone.message).toBe(
      "--ca-file trusts the server of an https:// --recipe or --snapshot, and neither is one",
    );
    const missing = thrown(() =>
      resolve({ recipe: "https://example.com/r.yaml", caFile: join(dir, "missing.pem") }),
    );
    expect(missing.message).toContain(`--ca-file ${JSON.stringify(join(dir, "missing.pem"))}: no such file`);
  });

  test("a file path that merely contains :// elsewhere stays a path; other schemes are refused", () => {
    expect(resolve({ recipe: "dir/a://b.yaml" }).recipe).toEqual({ kind: "file", path: "dir/a://b.yaml" });
    expect(thrown(() => resolve({ recipe: "s3://bucket/r.yaml" })).message).toContain(
      "s3:// is not a source aicr reads",
    );
  });
});
