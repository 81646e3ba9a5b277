/**
 * Push through a counting proxy in front of a real plain-HTTP registry (htpasswd; credentials are
 * allowed over plain HTTP to loopback): what goes over the wire on a first and a second push,
 * chunked uploads, relative Locations, bounded retries, 403 and resuming after a failure.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { AicrError } from "../../src/core/errors.ts";
import { buildTestArchive } from "../registry/archive.ts";
import { basic, basicAuth, blobDigest, pushTo, readBack, TEST_CHUNK } from "../registry/helpers.ts";
import { type CountingProxy, type SeenRequest, startProxy } from "../registry/proxy.ts";
import { type Registry, startRegistry } from "../registry/registry.ts";

const creds = basic("carol", "pw-carol");
let reg: Registry;
let proxy: CountingProxy | undefined;

beforeAll(async () => {
  reg = await startRegistry({ htpasswd: { user: "carol", password: "pw-carol" } });
}, 60_000);
afterAll(() => reg?.stop(), 30_000);
afterEach(() => proxy?.stop());

const via = (o: Omit<Parameters<typeof startProxy>[0], "upstream"> = {}): CountingProxy => {
  proxy = startProxy({ upstream: reg.url, ...o });
  return proxy;
};
const push = (p: CountingProxy, repo: string, archive = buildTestArchive()) =>
  pushTo(`${p.host}/${repo}`, archive, { plainHttp: true, credentials: creds });
const count = (p: CountingProxy, method: string, pathPart: string) =>
  p.seen.filter((r) => r.method === method && r.path.includes(pathPart)).length;

describe("over the wire", () => {
  test("first push: monolithic PUTs for small blobs, PATCH chunks for the big one; second push: no upload", async () => {
    const archive = buildTestArchive({ bigLayerBytes: 300 * 1024 });
    const big = Math.max(...[...archive.blobs.values()].map((b) => b.length));
    const p = via();
    await push(p, "wire/aicr", archive);
    expect(count(p, "POST", "/blobs/uploads/")).toBe(archive.blobs.size);
    expect(count(p, "PATCH", "/blobs/uploads/")).toBe(Math.ceil(big / TEST_CHUNK));
    expect(count(p, "PUT", "/blobs/uploads/")).toBe(archive.blobs.size);
    expect(count(p, "PUT", "/manifests/")).toBe(3);
    const auth = { auth: basicAuth("carol", "pw-carol") };
    for (const d of archive.blobs.keys()) expect(await blobDigest(reg.url, "wire/aicr", d, auth)).toBe(d);

    p.seen.length = 0;
    const { result } = await push(p, "wire/aicr", archive);
    expect(result.uploaded.blobs).toBe(0);
    expect(p.writes()).toEqual([{ method: "PUT", path: "/v2/wire/aicr/manifests/v1" }]);
    expect(count(p, "HEAD", "/blobs/")).toBe(archive.blobs.size);
  }, 60_000);

  test("relative Location headers are resolved against the registry", async () => {
    const archive = buildTestArchive();
    const p = via({ relativeLocations: true });
    const { result } = await push(p, "wire/relative", archive);
    expect(result.uploaded.blobs).toBe(archive.blobs.size);
    expect(
      (await readBack(reg.url, "wire/relative", "v1", { auth: basicAuth("carol", "pw-carol") })).digest,
    ).toBe(archive.digest);
  }, 60_000);
});

describe("failures", () => {
  const failFirst = (n: number, match: (r: SeenRequest) => boolean, status: number) => {
    let left = n;
    return (r: SeenRequest) => {
      if (!match(r) || left <= 0) return undefined;
      left--;
      return Response.json({ errors: [{ code: "UNAVAILABLE", message: "injected" }] }, { status });
    };
  };

  test("a 503 on a chunk restarts that blob's upload and the push completes", async () => {
    const p = via({ fault: failFirst(2, (r) => r.method === "PATCH", 503) });
    const { result, log } = await push(p, "fail/retry");
    expect(result.uploaded.blobs).toBeGreaterThan(0);
    expect(log.filter((l) => l.includes("retrying in")).length).toBe(2);
  }, 60_000);

  test("a 4xx is not retried", async () => {
    const p = via({ fault: failFirst(99, (r) => r.method === "PUT" && r.path.includes("/manifests/"), 400) });
    const err = (await push(p, "fail/bad").catch((e) => e)) as AicrError;
    expect(err.code).toBe("INVALID_REQUEST");
    expect(count(p, "PUT", "/manifests/")).toBe(1);
  }, 60_000);

  test("a 403 is UNAUTHORIZED with a push-permission remedy", async () => {
    const p = via({ fault: failFirst(99, (r) => r.method === "POST", 403) });
    const err = (await push(p, "fail/forbidden").catch((e) => e)) as AicrError;
    expect(err).toBeInstanceOf(AicrError);
    expect(err.code).toBe("UNAUTHORIZED");
    expect(err.message).toContain('refused user "carol" permission to push to "fail/forbidden"');
    expect(err.remedy).toContain("push access");
  }, 60_000);

  test("a registry failing for good: bounded tries, SERVICE_UNAVAILABLE; the next push resumes without re-uploading", async () => {
    const archive = buildTestArchive();
    const broken = via({
      fault: failFirst(99, (r) => r.method === "PUT" && r.path.includes("/manifests/"), 500),
    });
    const err = (await push(broken, "fail/resume", archive).catch((e) => e)) as AicrError;
    expect(err.code).toBe("SERVICE_UNAVAILABLE");
    expect(err.context.status).toBe(500);
    expect(count(broken, "PUT", "/manifests/")).toBe(3);
    broken.stop();
    const p = via();
    const { result } = await push(p, "fail/resume", archive);
    expect(result.uploaded.blobs).toBe(0);
    expect(result.skipped.blobs).toBe(archive.blobs.size);
    expect(count(p, "POST", "/blobs/uploads/")).toBe(0);
  }, 60_000);
});
