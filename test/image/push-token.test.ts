/**
 * The Bearer flow against a real registry in token mode (distribution 2.8 verifying ES256 JWTs from
 * the test token service): one token per scope set, cross-repository mounts with the source's pull
 * scope, `access_token` answers, identity tokens, and the refusals.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { buildTestArchive } from "../registry/archive.ts";
import { basic, pushTo, readBack } from "../registry/helpers.ts";
import { type Registry, startRegistry } from "../registry/registry.ts";
import { rejection } from "../support/reject.ts";

const USER = "dave";
const PASSWORD = "pw-dave";
const REFRESH = "refresh-token-of-dave";
let reg: Registry;

beforeAll(async () => {
  reg = await startRegistry({
    tls: true,
    token: { user: USER, password: PASSWORD, readOnly: ["locked/aicr"], refreshToken: REFRESH },
  });
}, 60_000);
afterAll(() => reg?.stop(), 30_000);
beforeEach(() => {
  reg.tokenServer!.requests.length = 0;
  reg.tokenServer!.options.accessTokenOnly = false;
});

const push = (repo: string, archive = buildTestArchive(), extra: Parameters<typeof pushTo>[2] = {}) =>
  pushTo(`${reg.host}/${repo}`, archive, { ca: reg.caPem, credentials: basic(USER, PASSWORD), ...extra });

async function bearer(repo: string): Promise<string> {
  const realm = new URL(reg.tokenServer!.realm);
  realm.searchParams.set("service", "aicr-test-registry");
  realm.searchParams.set("scope", `repository:${repo}:pull`);
  const res = await fetch(realm, {
    headers: { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString("base64")}` },
    tls: { ca: reg.caPem },
  });
  return `Bearer ${((await res.json()) as { token: string }).token}`;
}

describe("token auth", () => {
  test("one token for the whole push, with pull,push on the target", async () => {
    const archive = buildTestArchive();
    const { result } = await push("tok/aicr", archive);
    expect(result.uploaded.blobs).toBe(archive.blobs.size);
    expect(reg.tokenServer!.requests).toEqual([
      { method: "GET", user: USER, scopes: ["repository:tok/aicr:pull,push"], status: 200 },
    ]);
    const back = await readBack(reg.url, "tok/aicr", "v1", { ca: reg.caPem, auth: await bearer("tok/aicr") });
    expect(back.digest).toBe(archive.digest);
  }, 60_000);

  test("--mount-from: every blob mounted, none uploaded; the token also pulls the source", async () => {
    const archive = buildTestArchive();
    await push("tok/base", archive);
    reg.tokenServer!.requests.length = 0;
    const { result } = await push("tok/derived", archive, { mountFrom: "tok/base" });
    expect(result.mounted.blobs).toBe(archive.blobs.size);
    expect(result.uploaded.blobs).toBe(0);
    expect(reg.tokenServer!.requests.map((r) => r.scopes)).toEqual([
      ["repository:tok/base:pull", "repository:tok/derived:pull,push"],
    ]);
  }, 60_000);

  test("--mount-from a repository without the blobs: the registry opens uploads instead", async () => {
    const archive = buildTestArchive();
    const { result } = await push("tok/fallback", archive, { mountFrom: "tok/empty" });
    expect(result.mounted.blobs).toBe(0);
    expect(result.uploaded.blobs).toBe(archive.blobs.size);
  }, 60_000);

  test("a token service answering only access_token", async () => {
    reg.tokenServer!.options.accessTokenOnly = true;
    const { result } = await push("tok/oauth");
    expect(result.uploaded.blobs).toBeGreaterThan(0);
  }, 60_000);

  test("a Docker identity token: the OAuth2 refresh-token grant", async () => {
    const { result } = await push("tok/identity", buildTestArchive(), {
      credentials: { kind: "identity-token", username: "", token: REFRESH, source: "test" },
    });
    expect(result.uploaded.blobs).toBeGreaterThan(0);
    expect(reg.tokenServer!.requests.map((r) => r.method)).toEqual(["POST"]);
  }, 60_000);
});

describe("token refusals", () => {
  test("a wrong password: the token service refuses, UNAUTHORIZED", async () => {
    const err = await rejection(push("tok/aicr", buildTestArchive(), { credentials: basic(USER, "nope") }));
    expect(err.code).toBe("UNAUTHORIZED");
    expect(err.message).toContain(`rejected the credentials of user "${USER}"`);
  }, 30_000);

  test("anonymous: UNAUTHORIZED, the remedy is docker login", async () => {
    const err = await rejection(push("tok/aicr", buildTestArchive(), { credentials: undefined }));
    expect(err.code).toBe("UNAUTHORIZED");
    expect(err.remedy).toContain("docker login");
  }, 30_000);

  test("pull-only access: UNAUTHORIZED with the push-permission remedy", async () => {
    const err = await rejection(push("locked/aicr"));
    expect(err.code).toBe("UNAUTHORIZED");
    expect(err.message).toContain('permission to push to "locked/aicr"');
    expect(err.remedy).toContain("push access to locked/aicr");
  }, 30_000);
});
