/**
 * aicr's push against a real registry (distribution 2.8, TLS with the test CA, htpasswd auth):
 * what it stores, idempotence, and the failures an operator meets (wrong password, untrusted
 * certificate, nobody listening, Ctrl-C).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AicrError } from "../../src/core/errors.ts";
import { createLogger } from "../../src/core/log.ts";
import { MEDIA } from "../../src/image/_oci.ts";
import { buildTestArchive } from "../registry/archive.ts";
import { basic, basicAuth, blobDigest, pushTo, readBack } from "../registry/helpers.ts";
import { type Registry, startRegistry } from "../registry/registry.ts";
import { rejection } from "../support/reject.ts";

const USER = "alice";
const PASSWORD = "correct horse battery staple";
let reg: Registry;
const auth = () => ({ ca: reg.caPem, auth: basicAuth(USER, PASSWORD) });
const creds = basic(USER, PASSWORD);

beforeAll(async () => {
  reg = await startRegistry({ tls: true, htpasswd: { user: USER, password: PASSWORD } });
}, 60_000);
afterAll(() => reg?.stop(), 30_000);

describe("push to a TLS registry with basic auth", () => {
  const archive = buildTestArchive({ tag: "v1" });

  test("stores the index by tag and digest, every manifest and blob intact", async () => {
    const { result } = await pushTo(`${reg.host}/team/aicr`, archive, { ca: reg.caPem, credentials: creds });
    const blobBytes = [...archive.blobs.values()].reduce((n, b) => n + b.length, 0);
    expect(result).toEqual({
      reference: `${reg.host}/team/aicr@${archive.digest}`,
      tag: "v1",
      digest: archive.digest,
      uploaded: { blobs: archive.blobs.size, bytes: blobBytes },
      skipped: { blobs: 0, bytes: 0 },
      mounted: { blobs: 0, bytes: 0 },
      manifests: { put: 3, skipped: 0 },
      referrers: { count: 0, put: 0, skipped: 0, via: undefined, tags: { referrers: 0, signatures: 0 } },
    });
    const byTag = await readBack(reg.url, "team/aicr", "v1", auth());
    expect(byTag.digest).toBe(archive.digest);
    expect(byTag.mediaType).toBe(MEDIA.index);
    for (const m of archive.manifests) {
      const back = await readBack(reg.url, "team/aicr", m.digest, auth());
      expect(back.bytes).toEqual(m.bytes);
    }
    for (const digest of archive.blobs.keys())
      expect(await blobDigest(reg.url, "team/aicr", digest, auth())).toBe(digest);
  }, 60_000);

  test("a second push uploads nothing, skips the manifests and still puts the tag", async () => {
    const { result } = await pushTo(`${reg.host}/team/aicr`, archive, { ca: reg.caPem, credentials: creds });
    expect(result.uploaded).toEqual({ blobs: 0, bytes: 0 });
    expect(result.skipped.blobs).toBe(archive.blobs.size);
    expect(result.manifests).toEqual({ put: 1, skipped: 2 });
  }, 60_000);

  test("the destination's tag wins over the archive's ref.name; the old tag stays", async () => {
    const { result } = await pushTo(`${reg.host}/team/aicr:moved`, archive, {
      ca: reg.caPem,
      credentials: creds,
    });
    expect(result.tag).toBe("moved");
    expect((await readBack(reg.url, "team/aicr", "moved", auth())).digest).toBe(archive.digest);
    expect((await readBack(reg.url, "team/aicr", "v1", auth())).digest).toBe(archive.digest);
  }, 60_000);

  test("a single-platform archive: the tag names the manifest", async () => {
    const single = buildTestArchive({ platforms: 1, tag: "solo" });
    const { result } = await pushTo(`${reg.host}/team/solo`, single, { ca: reg.caPem, credentials: creds });
    expect(result.manifests).toEqual({ put: 1, skipped: 0 });
    const back = await readBack(reg.url, "team/solo", "solo", auth());
    expect(back).toMatchObject({ digest: single.digest, mediaType: MEDIA.manifest });
  }, 60_000);
});

describe("refusals", () => {
  const archive = buildTestArchive({ tag: "v1" });

  test("a wrong password: UNAUTHORIZED naming the registry and user, before any blob moves", async () => {
    const err = await rejection(
      pushTo(`${reg.host}/team/aicr`, archive, {
        ca: reg.caPem,
        credentials: { kind: "basic", username: "alice", password: "wrong", source: "--username" },
      }),
    );
    expect(err.code).toBe("UNAUTHORIZED");
    expect(err.exitCode).toBe(4);
    expect(err.message).toBe(`The registry "${reg.host}" rejected the credentials of user "alice"`);
    expect(err.remedy).toContain("--password-stdin");
    expect(`${err.message} ${err.remedy} ${JSON.stringify(err.context)}`).not.toContain("wrong");
  }, 30_000);

  test("no credentials: UNAUTHORIZED with docker login as the remedy", async () => {
    const err = await rejection(pushTo(`${reg.host}/team/aicr`, archive, { ca: reg.caPem }));
    expect(err.code).toBe("UNAUTHORIZED");
    expect(err.remedy).toContain(`docker login ${reg.host}`);
  }, 30_000);

  test("the test CA not given: SERVICE_UNAVAILABLE, the remedy names --ca-file", async () => {
    const err = await rejection(pushTo(`${reg.host}/team/aicr`, archive, { credentials: creds }));
    expect(err.code).toBe("SERVICE_UNAVAILABLE");
    expect(err.exitCode).toBe(6);
    expect(err.message).toContain("TLS certificate this machine does not trust");
    expect(err.remedy).toContain("--ca-file");
  }, 30_000);

  test("plain HTTP to a TLS port: the remedy says drop --plain-http", async () => {
    const err = await rejection(pushTo(`${reg.host}/team/aicr`, archive, { plainHttp: true }));
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.remedy).toContain("drop --plain-http");
  }, 30_000);

  test("nobody listening: SERVICE_UNAVAILABLE at once (a refused connection is not retried)", async () => {
    const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = probe.port;
    probe.stop(true);
    const err = await rejection(pushTo(`127.0.0.1:${port}/team/aicr`, archive, { credentials: creds }));
    expect(err.code).toBe("SERVICE_UNAVAILABLE");
    expect(err.message).toStartWith(`Cannot reach the registry "127.0.0.1:${port}"`);
  }, 30_000);

  test("cancelled mid-push: CANCELED; the next push keeps what was uploaded", async () => {
    const fresh = buildTestArchive({ tag: "v1" });
    const ac = new AbortController();
    const log = createLogger({
      write: (line) => {
        if (line.startsWith("Uploaded")) ac.abort(new AicrError("CANCELED", "cancelled by SIGINT"));
      },
    });
    const err = await rejection(
      pushTo(`${reg.host}/team/cancel`, fresh, { ca: reg.caPem, credentials: creds, signal: ac.signal, log }),
    );
    expect(err.code).toBe("CANCELED");
    const { result } = await pushTo(`${reg.host}/team/cancel`, fresh, { ca: reg.caPem, credentials: creds });
    expect(result.skipped.blobs).toBeGreaterThanOrEqual(1);
    expect(result.skipped.blobs + result.uploaded.blobs).toBe(fresh.blobs.size);
  }, 30_000);

  test("cancelled: CANCELED, nothing sent", async () => {
    const ac = new AbortController();
    ac.abort(new AicrError("CANCELED", "cancelled by SIGINT"));
    const err = await rejection(
      pushTo(`${reg.host}/team/aicr`, archive, { ca: reg.caPem, credentials: creds, signal: ac.signal }),
    );
    expect(err.code).toBe("CANCELED");
  }, 30_000);
});
