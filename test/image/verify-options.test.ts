/**
 * aicr image verify's inputs, checked before any request: the image (an archive that exists, else a
 * registry reference by tag or digest), the key (a P-256 public key; a private key refused), the
 * registry flags (as push checks them; refused for an archive); and the report's JSON form.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { parseImageReference } from "../../src/image/registry/_reference.ts";
import { resolveVerifyInputs, type VerifyFlags } from "../../src/image/verify/options.ts";
import { report } from "../../src/image/verify/report.ts";
import { rejection, thrown } from "../support/reject.ts";
import { newKey, testImage, writeFiles } from "./_verify-fixtures.ts";

const D = `sha256:${"ab".repeat(32)}`;
const key = newKey();
const files = writeFiles({
  "image.tar": testImage({ platforms: 1 }).archive,
  "key.pub": key.pub,
  "key.pem": key.priv,
  "junk.tar": "not a tar at all, just text that is long enough to look like something",
  "ca.pem": "no certificate here",
});
afterAll(() => rmSync(files.dir, { recursive: true, force: true }));

const refuse = (f: VerifyFlags, stdin = "") => rejection(resolveVerifyInputs(f, async () => stdin));
const withKey = (f: VerifyFlags): VerifyFlags => ({ key: files["key.pub"], ...f });

describe("image references", () => {
  test("by tag, by digest; Docker Hub's API host", () => {
    expect(parseImageReference("r.example.com:5000/team/aicr:v1")).toEqual({
      registry: "r.example.com:5000",
      apiHost: "r.example.com:5000",
      repository: "team/aicr",
      tag: "v1",
    });
    expect(parseImageReference(`localhost/aicr@${D}`)).toEqual({
      registry: "localhost",
      apiHost: "localhost",
      repository: "aicr",
      digest: D,
    });
    expect(parseImageReference("docker.io/nginx:1")).toMatchObject({
      apiHost: "registry-1.docker.io",
      repository: "library/nginx",
    });
  });

  test("refusals name the reference and say what to write", () => {
    for (const [value, detail] of [
      ["r.io/a@sha256:abc", '"sha256:abc" is not a sha256 digest'],
      [`r.io/a:v1@${D}`, "it names both a tag and a digest"],
      ["user:pw@r.io/a:v1", "credentials in a reference are refused"],
      ["team/aicr:v1", "expected <registry>/<repository>[:<tag>] or"],
      ["r.io/Team:v1", 'repository path component "Team" is not valid'],
    ] as const) {
      const err = thrown(() => parseImageReference(value));
      expect(err.code).toBe("INVALID_REQUEST");
      expect(err.message).toContain("Invalid image reference ");
      expect(err.message).toContain(detail);
      expect(err.message).not.toContain("pw@");
      expect(err.remedy).toBeTruthy();
    }
  });
});

describe("flags, before any request", () => {
  test("an archive that exists is read; a reference is parsed", async () => {
    const a = await resolveVerifyInputs(withKey({ image: files["image.tar"] }), async () => "");
    expect(a.target.kind).toBe("archive");
    expect(a.key.fingerprint).toMatch(/^sha256:[a-f0-9]{64}$/);
    const r = await resolveVerifyInputs(
      withKey({ image: "localhost:5000/team/aicr:v1", username: "u", passwordStdin: true }),
      async () => "secret\n",
    );
    expect(r.target).toMatchObject({
      kind: "registry",
      ref: { registry: "localhost:5000", repository: "team/aicr", tag: "v1" },
      access: { username: "u", password: "secret", plainHttp: false },
    });
  });

  test("the image and the key are required", async () => {
    expect((await refuse({ key: files["key.pub"] })).message).toStartWith(
      "Missing the image: expected aicr image verify",
    );
    const noKey = await refuse({ image: files["image.tar"] });
    expect(noKey.message).toBe("Missing --key: the public key the image must be signed with");
  });

  test("the key: a private key, a missing file", async () => {
    const priv = await refuse({ image: files["image.tar"], key: files["key.pem"] });
    expect(priv.code).toBe("INVALID_REQUEST");
    expect(priv.message).toContain("a private key");
    expect(priv.remedy).toContain("-pubout");
    const gone = await refuse({ image: files["image.tar"], key: `${files.dir}/absent.pub` });
    expect(gone.message).toBe(`--key ${JSON.stringify(`${files.dir}/absent.pub`)}: no such file`);
  });

  test("neither a file nor a reference: both said", async () => {
    const err = await refuse(withKey({ image: "./aicr-image.tar" }));
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.message).toEndWith("(and no file has that name)");
    expect(err.remedy).toEndWith("or pass the path of an OCI archive");
  });

  test("a reference without a tag or digest", async () => {
    const err = await refuse(withKey({ image: "r.example.com/team/aicr" }));
    expect(err.message).toBe('Invalid image reference "r.example.com/team/aicr": it names no tag or digest');
  });

  test("registry flags with an archive are refused, naming them", async () => {
    const err = await refuse(
      withKey({ image: files["image.tar"], caFile: files["ca.pem"], plainHttp: true }),
    );
    expect(err.message).toBe(
      `--ca-file, --plain-http: for a registry reference, and ${JSON.stringify(files["image.tar"])} is a file`,
    );
  });

  test("registry flags checked as push checks them", async () => {
    const remote = "r.example.com/team/aicr:v1";
    expect((await refuse(withKey({ image: remote, username: "u" }))).remedy).toContain("aicr image verify …");
    expect(
      (await refuse(withKey({ image: remote, username: "u", passwordStdin: true, plainHttp: true }))).message,
    ).toBe('Refusing to send the password for "r.example.com" over plain HTTP');
    expect((await refuse(withKey({ image: remote, caFile: files["ca.pem"] }))).message).toContain(
      "holds no PEM certificate",
    );
  });

  test("a file that is not an OCI archive: INVALID_REQUEST, not a verdict", async () => {
    const err = await refuse(withKey({ image: files["junk.tar"] }));
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.message).toStartWith(
      `The archive ${JSON.stringify(files["junk.tar"])} is not a valid OCI archive: `,
    );
  });
});

test("the JSON report: reference, digest, key, ok, checks — in that order", () => {
  const r = report("x.tar", D, "sha256:ff", [
    { subject: D, kind: "manifest", platform: "linux/amd64", check: "blobs", ok: true },
    {
      subject: D,
      kind: "manifest",
      check: "signature",
      ok: false,
      reason: `no signature by this key for ${D}`,
    },
  ]);
  expect(Object.keys(r)).toEqual(["reference", "digest", "key", "ok", "checks"]);
  expect(r.ok).toBe(false);
  expect(JSON.parse(JSON.stringify(r)).key).toEqual({ fingerprint: "sha256:ff" });
});
