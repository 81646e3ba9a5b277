import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AicrError } from "../../src/core/errors.ts";
import { readOciArchive } from "../../src/image/_archive.ts";
import { canonicalJson, type Descriptor, MEDIA, sha256Digest } from "../../src/image/_oci.ts";
import { ARTIFACT, COSIGN_SIGNATURE_ANNOTATION } from "../../src/image/_referrers.ts";
import { mergeScopes, parseChallenge } from "../../src/image/registry/_challenge.ts";
import { transportError } from "../../src/image/registry/_errors.ts";
import { planPush, tagOfRefName } from "../../src/image/registry/_plan.ts";
import { isLoopback, parseMountFrom, parsePushTarget } from "../../src/image/registry/_reference.ts";
import { mergeCosignSignatures, mergeReferrersIndex } from "../../src/image/registry/_referrer-tags.ts";
import { resolvePushInputs, trimPassword } from "../../src/image/registry/options.ts";
import { buildTestArchive } from "../registry/archive.ts";
import { writeArchive } from "../registry/helpers.ts";
import { rejection, thrown } from "../support/reject.ts";

describe("push destinations", () => {
  test("host:port, nested repository and tag", () => {
    expect(parsePushTarget("registry.example.com:5000/team/aicr:v1")).toEqual({
      registry: "registry.example.com:5000",
      apiHost: "registry.example.com:5000",
      repository: "team/aicr",
      tag: "v1",
    });
    expect(parsePushTarget("localhost/aicr")).toEqual({
      registry: "localhost",
      apiHost: "localhost",
      repository: "aicr",
    });
    expect(parsePushTarget("[::1]:5000/a.b/c_d:1.0-rc")).toMatchObject({
      repository: "a.b/c_d",
      tag: "1.0-rc",
    });
  });

  test("Docker Hub: the API host and the library/ prefix", () => {
    expect(parsePushTarget("docker.io/nginx:1")).toMatchObject({
      apiHost: "registry-1.docker.io",
      repository: "library/nginx",
    });
    expect(parsePushTarget("docker.io/me/aicr")).toMatchObject({ repository: "me/aicr" });
  });

  test("refusals say what was wrong and what to write", () => {
    for (const bad of [
      "team/aicr:v1",
      "aicr",
      `localhost:5000/aicr@sha256:${"a".repeat(64)}`,
      "r.io/Team/aicr",
      "r.io/a:-x",
      "r.io/a//b",
      "bad_host.io/a",
    ]) {
      const err = thrown(() => parsePushTarget(bad));
      expect(err.code).toBe("INVALID_REQUEST");
      expect(err.message).toStartWith(`Invalid push destination ${JSON.stringify(bad)}: `);
      expect(err.remedy).toBeTruthy();
    }
  });

  test("--mount-from takes a repository, with or without the registry", () => {
    const t = parsePushTarget("r.example.com/team/aicr");
    expect(parseMountFrom("r.example.com/base/aicr", t)).toBe("base/aicr");
    expect(parseMountFrom("base/aicr", t)).toBe("base/aicr");
    expect(thrown(() => parseMountFrom("base/aicr:v1", t)).code).toBe("INVALID_REQUEST");
  });

  test("loopback hosts", () => {
    for (const h of ["localhost", "localhost:5000", "127.0.0.1:80", "127.5.5.5", "[::1]:5000"])
      expect(isLoopback(h)).toBe(true);
    for (const h of ["10.0.0.1:5000", "registry.local", "example.com"]) expect(isLoopback(h)).toBe(false);
  });
});

describe("protocol pieces", () => {
  test("a Bearer challenge keeps commas inside quoted scopes", () => {
    expect(
      parseChallenge(
        'Bearer realm="https://auth.example.com/token",service="registry.example.com",scope="repository:a/b:pull,push",error="insufficient_scope"',
      ),
    ).toEqual({
      scheme: "bearer",
      params: {
        realm: "https://auth.example.com/token",
        service: "registry.example.com",
        scope: "repository:a/b:pull,push",
        error: "insufficient_scope",
      },
    });
    expect(parseChallenge('Basic realm="x"')).toEqual({ scheme: "basic", params: { realm: "x" } });
    expect(parseChallenge(null)).toBeUndefined();
  });

  test("scopes merge per resource, so one token serves a push", () => {
    expect(
      mergeScopes([
        "repository:a/b:pull,push",
        "repository:a/b:pull",
        "repository:c:pull",
        "registry:catalog:*",
      ]),
    ).toEqual(["registry:catalog:*", "repository:a/b:pull,push", "repository:c:pull"]);
  });

  test("one trailing newline is not part of a piped password", () => {
    expect(trimPassword("s3cret\n")).toBe("s3cret");
    expect(trimPassword("s3cret\r\n")).toBe("s3cret");
    expect(trimPassword("s3cret\n\n")).toBe("s3cret\n");
    expect(trimPassword(" s3cret ")).toBe(" s3cret ");
  });

  test("a ref.name is a tag or a whole reference", () => {
    expect(tagOfRefName("v1")).toBe("v1");
    expect(tagOfRefName("ghcr.io/x/aicr:0.1.0")).toBe("0.1.0");
    expect(tagOfRefName("localhost:5000/aicr")).toBeUndefined();
    expect(tagOfRefName(undefined)).toBeUndefined();
  });

  test("transport failures: certificate problems point at --ca-file", () => {
    const cert = transportError(
      Object.assign(new TypeError("unable to verify the first certificate"), {
        code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
      }),
      "r:5000",
      false,
    );
    expect(cert.code).toBe("SERVICE_UNAVAILABLE");
    expect(cert.remedy).toContain("--ca-file");
    const dns = transportError(
      Object.assign(new TypeError("getaddrinfo ENOTFOUND r"), { code: "ENOTFOUND" }),
      "r",
      false,
    );
    expect(dns.message).toStartWith('Cannot resolve the registry host "r"');
    const reset = transportError(Object.assign(new TypeError("closed"), { code: "ECONNRESET" }), "r", false);
    expect(reset.context.retryable).toBe(true);
  });
});

describe("push plan", () => {
  test("blobs once each, children before the index, the tag from ref.name", () => {
    const a = buildTestArchive({ tag: "v7" });
    const plan = planPush(readOciArchive(a.bytes), undefined, "a.tar");
    expect(plan.tag).toBe("v7");
    expect(plan.root.digest).toBe(a.digest);
    expect(plan.root.mediaType).toBe(MEDIA.index);
    expect(plan.manifests.map((m) => m.digest)).toEqual(a.manifests.map((m) => m.digest));
    expect(new Set(plan.blobs.map((b) => b.digest))).toEqual(new Set(a.blobs.keys()));
    expect(plan.blobs).toHaveLength(a.blobs.size);
  });

  test("a single-platform archive tags its manifest", () => {
    const a = buildTestArchive({ platforms: 1 });
    const plan = planPush(readOciArchive(a.bytes), "other", "a.tar");
    expect(plan).toMatchObject({ tag: "other", root: { digest: a.digest, mediaType: MEDIA.manifest } });
    expect(plan.manifests).toHaveLength(1);
  });
});

describe("push plan: referrers", () => {
  test("after the root, the referrers of the pushed manifests in the layout's order, their blobs with the image's", () => {
    const a = buildTestArchive({ tag: "v1", referrers: true });
    const oci = readOciArchive(a.bytes);
    const plan = planPush(oci, undefined, "a.tar");
    // pickRoot looks at the images only: index.json also lists 8 referrers
    expect(oci.index.manifests).toHaveLength(9);
    expect(plan.root.digest).toBe(a.digest);
    expect(plan.referrers.map((r) => r.manifest.digest)).toEqual(
      oci.referrers.map((r) => r.descriptor.digest),
    );
    expect(plan.referrers.map((r) => r.subject)[0]).toBe(a.digest);
    for (const r of plan.referrers) {
      const artifact = a.referrers.find((x) => x.descriptor.digest === r.manifest.digest)!;
      expect(r.manifest.bytes).toEqual(artifact.manifest);
      expect(r.descriptor).toEqual(artifact.descriptor);
      expect(r.signatures).toEqual(
        artifact.descriptor.artifactType === ARTIFACT.cosignSignature
          ? [JSON.parse(new TextDecoder().decode(artifact.manifest)).layers[0]]
          : [],
      );
      for (const b of artifact.blobs) expect(plan.blobs.some((p) => p.digest === b.digest)).toBe(true);
    }
    expect(plan.blobs).toHaveLength(new Set(plan.blobs.map((b) => b.digest)).size);
  });
});

describe("referrer tags", () => {
  const layer = (data: string, signature: string) => ({
    mediaType: ARTIFACT.simpleSigning,
    digest: sha256Digest(data),
    size: data.length,
    annotations: { [COSIGN_SIGNATURE_ANNOTATION]: signature },
  });

  test("cosign's .sig manifest and config, byte for byte as cosign (go-containerregistry) writes them", () => {
    // cosign's empty signature image with the two layers appended, as go-containerregistry v0.22.1 marshals it
    const first = mergeCosignSignatures(undefined, [layer('{"a":1}', "c2ln")], "t", "r")!;
    const second = mergeCosignSignatures(
      first.manifest,
      [{ ...layer('{"b":2}', "c2ln2"), annotations: { z: "1", [COSIGN_SIGNATURE_ANNOTATION]: "c2ln2" } }],
      "t",
      "r",
    )!;
    expect(new TextDecoder().decode(second.config)).toBe(
      '{"architecture":"","created":"0001-01-01T00:00:00Z","history":[{"created":"0001-01-01T00:00:00Z"},{"created":"0001-01-01T00:00:00Z"}],"os":"","rootfs":{"type":"layers","diff_ids":["sha256:015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862","sha256:0ab1a6d394cd30195f0642b67ae1180c375ffadf5dd7f39c390668b5fdb6da93"]},"config":{}}',
    );
    expect(new TextDecoder().decode(second.manifest)).toBe(
      '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","size":342,"digest":"sha256:1dee122c0226a5eb91ed4ab7a6e1f41870180f7b7cff34d61cea40ce8e910869"},"layers":[{"mediaType":"application/vnd.dev.cosign.simplesigning.v1+json","size":7,"digest":"sha256:015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862","annotations":{"dev.cosignproject.cosign/signature":"c2ln"}},{"mediaType":"application/vnd.dev.cosign.simplesigning.v1+json","size":7,"digest":"sha256:0ab1a6d394cd30195f0642b67ae1180c375ffadf5dd7f39c390668b5fdb6da93","annotations":{"dev.cosignproject.cosign/signature":"c2ln2","z":"1"}}]}',
    );
    // the same signature again adds nothing; the same payload signed by another key is another signature
    expect(mergeCosignSignatures(second.manifest, [layer('{"a":1}', "c2ln")], "t", "r")).toBeUndefined();
    const third = mergeCosignSignatures(second.manifest, [layer('{"a":1}', "b3RoZXI=")], "t", "r")!;
    expect(JSON.parse(new TextDecoder().decode(third.manifest)).layers).toHaveLength(3);
  });

  test("the tag-scheme index: what is listed stays, what is missing is appended once, nothing missing → no write", () => {
    const d = (n: string): Descriptor => ({
      mediaType: MEDIA.manifest,
      digest: sha256Digest(n),
      size: 1,
      artifactType: "x/y",
    });
    const fresh = mergeReferrersIndex(undefined, [d("a"), d("a"), d("b")], "t", "r")!;
    expect(JSON.parse(new TextDecoder().decode(fresh))).toEqual({
      schemaVersion: 2,
      mediaType: MEDIA.index,
      manifests: [d("a"), d("b")],
    });
    expect(mergeReferrersIndex(fresh, [d("b"), d("a")], "t", "r")).toBeUndefined();
    const more = mergeReferrersIndex(fresh, [d("c"), d("a")], "t", "r")!;
    expect(JSON.parse(new TextDecoder().decode(more)).manifests).toEqual([d("a"), d("b"), d("c")]);
    const image = canonicalJson({ schemaVersion: 2, mediaType: MEDIA.manifest, config: {}, layers: [] });
    const err = thrown(() => mergeReferrersIndex(image, [d("a")], "sha256-ab", "r.example"));
    expect(err.code).toBe("CONFLICT");
    expect(err.message).toBe(
      'The tag sha256-ab on "r.example" holds a manifest that is not an OCI image index',
    );
    expect(err.remedy).toContain("delete it");
    expect(thrown(() => mergeReferrersIndex(new TextEncoder().encode("{"), [], "t", "r")).message).toContain(
      "not JSON",
    );
  });
});

describe("push inputs are checked before any request", () => {
  let dir: string;
  let archive: string;
  let base: { archive: string; destination: string };
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "aicr-push-inputs-"));
    archive = writeArchive(buildTestArchive(), dir);
    base = { archive, destination: "registry.example.com/team/aicr:v1" };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const stdin = (text: string) => async () => text;
  const failing = (flags: Parameters<typeof resolvePushInputs>[0]) =>
    rejection(resolvePushInputs(flags, stdin("pw\n")));

  test("a good set: the archive read, the password trimmed", async () => {
    const inputs = await resolvePushInputs(
      { ...base, username: "alice", passwordStdin: true },
      stdin("pw\n"),
    );
    expect(inputs).toMatchObject({
      username: "alice",
      password: "pw",
      plainHttp: false,
      target: { tag: "v1" },
    });
    expect(inputs.archive.images).toHaveLength(2);
  });

  test("refusals", async () => {
    expect((await failing({ archive })).message).toStartWith("Missing the destination");
    expect((await failing({ ...base, username: "alice" })).message).toContain("needs --password-stdin");
    expect((await failing({ ...base, passwordStdin: true })).message).toBe(
      "--password-stdin needs --username",
    );
    expect(
      (await failing({ ...base, username: "alice", passwordStdin: true, plainHttp: true })).message,
    ).toContain("over plain HTTP");
    expect((await failing({ ...base, caFile: "/nonexistent/ca.pem" })).message).toContain(
      '--ca-file "/nonexistent/ca.pem": no such file',
    );
    const notPem = `${archive}.txt`;
    writeFileSync(notPem, "hello");
    expect((await failing({ ...base, caFile: notPem })).message).toContain("holds no PEM certificate");
    expect((await failing({ ...base, archive: notPem })).message).toContain("is not a valid OCI archive");
    expect((await failing({ ...base, archive: "/nonexistent.tar" })).message).toContain(
      'archive "/nonexistent.tar": no such file',
    );
    const empty = await resolvePushInputs({ ...base, username: "a", passwordStdin: true }, stdin("\n")).catch(
      (e) => e,
    );
    expect((empty as AicrError).message).toContain("empty password");
  });

  test("plain HTTP with a password is fine for a loopback registry", async () => {
    const inputs = await resolvePushInputs(
      { archive, destination: "127.0.0.1:5000/aicr:v1", username: "a", passwordStdin: true, plainHttp: true },
      stdin("pw"),
    );
    expect(inputs.plainHttp).toBe(true);
  });
});
