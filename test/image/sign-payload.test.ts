import { expect, test } from "bun:test";
import { buildPayload, isRepository, parsePayload, repositoryOf } from "../../src/image/sign/_payload.ts";

const DIGEST = `sha256:${"0123456789abcdef".repeat(4)}`;
const text = (b: Uint8Array) => new TextDecoder().decode(b);
const bytes = (s: string) => new TextEncoder().encode(s);

test("the payload is byte for byte what cosign (sigstore payload.Cosign, Go's json.Marshal) writes", () => {
  // Printed by a Go program calling sigstore v1.10.3's (&payload.Cosign{Image: digest}).MarshalJSON().
  expect(text(buildPayload("ghcr.io/aicr-project/aicr", DIGEST))).toBe(
    `{"critical":{"identity":{"docker-reference":"ghcr.io/aicr-project/aicr"},"image":{"docker-manifest-digest":"${DIGEST}"},"type":"cosign container image signature"},"optional":null}`,
  );
  expect(text(buildPayload("localhost:5000/aicr", DIGEST))).toBe(
    `{"critical":{"identity":{"docker-reference":"localhost:5000/aicr"},"image":{"docker-manifest-digest":"${DIGEST}"},"type":"cosign container image signature"},"optional":null}`,
  );
});

test("buildPayload refuses what is not a repository or not a digest", () => {
  expect(() => buildPayload("ghcr.io/aicr:v1", DIGEST)).toThrow("not a repository");
  expect(() => buildPayload("Bad/Upper", DIGEST)).toThrow("not a repository");
  expect(() => buildPayload("a<b", DIGEST)).toThrow("not a repository");
  expect(() => buildPayload("ghcr.io/aicr", "sha256:abc")).toThrow("not a sha256 digest");
  expect(isRepository("registry.example.com:443/team/sub_dir/aicr-x.y")).toBe(true);
  expect(isRepository("")).toBe(false);
});

test("parsePayload reads back what buildPayload wrote, and cosign's optional annotations", () => {
  expect(parsePayload(buildPayload("ghcr.io/aicr-project/aicr", DIGEST))).toEqual({
    ok: true,
    claim: { dockerReference: "ghcr.io/aicr-project/aicr", digest: DIGEST },
  });
  const withOptional = `{"critical":{"identity":{"docker-reference":"r/x"},"image":{"docker-manifest-digest":"${DIGEST}"},"type":"cosign container image signature"},"optional":{"a":"b"}}`;
  expect(parsePayload(bytes(withOptional))).toMatchObject({ ok: true });
});

test("parsePayload is strict: the type, the digest's form, the shape — each a reason", () => {
  const make = (critical: unknown, optional: unknown = null) =>
    parsePayload(bytes(JSON.stringify({ critical, optional })));
  const good = {
    identity: { "docker-reference": "r/x" },
    image: { "docker-manifest-digest": DIGEST },
    type: "cosign container image signature",
  };
  expect(make({ ...good, type: "atomic container signature" })).toEqual({
    ok: false,
    reason: 'critical.type is "atomic container signature", not "cosign container image signature"',
  });
  expect(make({ ...good, type: undefined })).toMatchObject({
    ok: false,
    reason: expect.stringContaining("critical.type is null"),
  });
  for (const digest of [DIGEST.toUpperCase(), "sha512:abcd", `${DIGEST}0`, `sha256:${"g".repeat(64)}`])
    expect(make({ ...good, image: { "docker-manifest-digest": digest } })).toMatchObject({
      ok: false,
      reason: expect.stringContaining("docker-manifest-digest"),
    });
  expect(make({ ...good, image: {} })).toMatchObject({
    ok: false,
    reason: expect.stringContaining("missing"),
  });
  expect(make({ ...good, identity: {} })).toMatchObject({
    ok: false,
    reason: expect.stringContaining("docker-reference"),
  });
  expect(make(good, "text")).toMatchObject({ ok: false, reason: "optional is neither null nor an object" });
  expect(make("x")).toEqual({ ok: false, reason: "the payload has no critical object" });
  expect(parsePayload(bytes("[]"))).toEqual({ ok: false, reason: "the payload is not a JSON object" });
  expect(parsePayload(bytes("{"))).toEqual({ ok: false, reason: "the payload is not JSON" });
  expect(parsePayload(new Uint8Array([0xff, 0xfe]))).toEqual({
    ok: false,
    reason: "the payload is not UTF-8",
  });
});

test("repositoryOf: the name without tag or digest, normalised as go-containerregistry does", () => {
  const cases: [string, string | undefined][] = [
    ["ghcr.io/aicr-project/aicr:v0.1.0", "ghcr.io/aicr-project/aicr"],
    ["ghcr.io/aicr-project/aicr", "ghcr.io/aicr-project/aicr"],
    [`localhost:5000/aicr@${DIGEST}`, "localhost:5000/aicr"],
    ["localhost:5000/team/aicr:latest", "localhost:5000/team/aicr"],
    ["localhost/aicr:1", "localhost/aicr"],
    ["aicr:v1", "index.docker.io/library/aicr"],
    ["team/aicr:v1", "index.docker.io/team/aicr"],
    ["docker.io/aicr", "index.docker.io/library/aicr"],
    ["docker.io/team/aicr:v1", "index.docker.io/team/aicr"],
    ["Registry.Example.com/a", "Registry.Example.com/a"],
    ["ghcr.io/UPPER/aicr:v1", undefined],
    ["", undefined],
    [":v1", undefined],
  ];
  for (const [name, want] of cases) expect([name, repositoryOf(name)]).toEqual([name, want]);
});
