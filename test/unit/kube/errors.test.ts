/**
 * The decoding of a non-2xx answer into KubeStatusError and the predicates: on answers as kube/http.ts
 * hands them over, then on the fake apiserver's own answers at the HTTP boundary (the real apiserver's
 * are checked in test/cluster/kube-client.test.ts).
 */

import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Writable } from "node:stream";
import { parse, stringify } from "yaml";
import { AicrError, formatError } from "../../../src/core/errors.ts";
import { KubeClient } from "../../../src/kube/client.ts";
import {
  isAlreadyExists,
  isBadRequest,
  isConflict,
  isForbidden,
  isInvalid,
  isMethodNotSupported,
  isNotFound,
  isTransient,
  isUnauthorized,
  KubeStatusError,
  toAicrError,
} from "../../../src/kube/errors.ts";
import { KubeHttpError, NoAnswerError } from "../../../src/kube/http.ts";
import { ApiStatusError, type StatusDetails } from "../../cluster/errors.ts";
import { resource } from "../../cluster/resources.ts";
import { CLUSTER_HOOK_MS, startTestCluster, type TestCluster } from "../../cluster/testbed.ts";
import { rejection } from "../../support/reject.ts";

/** An answer as the apiserver sends it: a metav1.Status body. */
function answer(
  status: number,
  body: unknown,
  o: { headers?: Record<string, string>; method?: string; path?: string } = {},
): KubeHttpError {
  return new KubeHttpError(
    status,
    typeof body === "string" ? body : JSON.stringify(body),
    new Headers(o.headers),
    o.method ?? "GET",
    o.path ?? "/api/v1/namespaces/demo/configmaps/x",
  );
}

/** A metav1.Status as kube-apiserver writes it (the fake's own builder). */
const status = (code: number, reason: string, message: string, details?: object) =>
  new ApiStatusError(code, reason, message, details as StatusDetails).status;

const decoded = (err: KubeHttpError, doing = "reading ConfigMap demo/x"): KubeStatusError => {
  const out = toAicrError(err, doing);
  if (!(out instanceof KubeStatusError)) throw new Error(`not a KubeStatusError: ${String(out)}`);
  return out;
};

describe("KubeStatusError", () => {
  test("carries the HTTP status, the decoded Status and the request; still an AicrError with its code", () => {
    const err = decoded(
      answer(404, status(404, "NotFound", 'configmaps "x" not found', { name: "x", kind: "configmaps" }), {
        method: "GET",
        path: "/api/v1/namespaces/demo/configmaps/x",
      }),
    );
    expect(err).toBeInstanceOf(AicrError);
    expect(err.code).toBe("NOT_FOUND");
    expect(err.httpStatus).toBe(404);
    expect(err.status).toEqual({
      code: 404,
      reason: "NotFound",
      message: 'configmaps "x" not found',
      details: { name: "x", kind: "configmaps" },
    });
    expect(err.method).toBe("GET");
    expect(err.path).toBe("/api/v1/namespaces/demo/configmaps/x");
    expect(err.message).toBe('reading ConfigMap demo/x: configmaps "x" not found');
    // What logs and `main` show is unchanged: the context keys and the text form.
    expect(err.context).toEqual({ status: 404, reason: "NotFound" });
    expect(formatError(err)).toBe(
      '[NOT_FOUND] reading ConfigMap demo/x: configmaps "x" not found: HTTP 404\n  remedy: check the name and namespace (kubectl get shows what exists)',
    );
  });

  test("field causes of an Invalid answer are kept", () => {
    const err = decoded(
      answer(
        422,
        status(422, "Invalid", 'ConfigMap "Bad" is invalid: metadata.name: Invalid value: "Bad"', {
          name: "Bad",
          kind: "ConfigMap",
          causes: [{ reason: "FieldValueInvalid", message: 'Invalid value: "Bad"', field: "metadata.name" }],
        }),
        { method: "POST", path: "/api/v1/namespaces/demo/configmaps" },
      ),
      "creating ConfigMap demo/Bad",
    );
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.status.details?.causes).toEqual([
      { reason: "FieldValueInvalid", message: 'Invalid value: "Bad"', field: "metadata.name" },
    ]);
    expect(isInvalid(err)).toBe(true);
  });

  test("Retry-After is read from the header (seconds), and kept in the context as before", () => {
    const err = decoded(
      answer(429, status(429, "TooManyRequests", "slow down", { retryAfterSeconds: 2 }), {
        headers: { "Retry-After": "3" },
      }),
    );
    expect(err.code).toBe("RATE_LIMIT_EXCEEDED");
    expect(err.retryAfterSeconds).toBe(3);
    expect(err.status.details?.retryAfterSeconds).toBe(2);
    expect(err.context).toEqual({ status: 429, reason: "TooManyRequests", retryAfterSeconds: 3 });
    expect(decoded(answer(503, status(503, "ServiceUnavailable", "x"))).retryAfterSeconds).toBeUndefined();
  });

  test("a body that is not a Status (a proxy's page, nothing at all) still decodes", () => {
    const page = decoded(answer(502, "<html>Bad Gateway</html>\n"));
    expect(page.status).toEqual({ code: 502, reason: "Unknown", message: "<html>Bad Gateway</html>" });
    expect(page.code).toBe("INTERNAL");
    const empty = decoded(answer(401, ""));
    expect(empty.status).toEqual({ code: 401, reason: "Unauthorized", message: "HTTP 401" });
    expect(empty.code).toBe("UNAUTHORIZED");
    expect(empty.remedy).toContain("kubeconfig credentials were rejected");
  });

  test("HTTP status → error code, as before", () => {
    const codes = [400, 401, 403, 404, 409, 415, 422, 429, 500, 503, 504].map(
      (s) => decoded(answer(s, status(s, "X", "m"))).code,
    );
    expect(codes).toEqual([
      "INVALID_REQUEST",
      "UNAUTHORIZED",
      "UNAUTHORIZED",
      "NOT_FOUND",
      "CONFLICT",
      "INVALID_REQUEST",
      "INVALID_REQUEST",
      "RATE_LIMIT_EXCEEDED",
      "INTERNAL",
      "SERVICE_UNAVAILABLE",
      "SERVICE_UNAVAILABLE",
    ]);
  });
});

describe("predicates", () => {
  const of = (code: number, reason: string) => decoded(answer(code, status(code, reason, "m")));
  const predicates = {
    isNotFound,
    isAlreadyExists,
    isConflict,
    isForbidden,
    isUnauthorized,
    isMethodNotSupported,
    isBadRequest,
    isInvalid,
  };
  const which = (err: unknown) =>
    Object.entries(predicates)
      .filter(([, p]) => p(err))
      .map(([name]) => name);

  test("each answer matches exactly its own predicate", () => {
    expect(which(of(404, "NotFound"))).toEqual(["isNotFound"]);
    expect(which(of(409, "AlreadyExists"))).toEqual(["isAlreadyExists"]);
    expect(which(of(409, "Conflict"))).toEqual(["isConflict"]);
    expect(which(of(403, "Forbidden"))).toEqual(["isForbidden"]);
    expect(which(of(401, "Unauthorized"))).toEqual(["isUnauthorized"]);
    expect(which(of(405, "MethodNotAllowed"))).toEqual(["isMethodNotSupported"]);
    expect(which(of(400, "BadRequest"))).toEqual(["isBadRequest"]);
    expect(which(of(422, "Invalid"))).toEqual(["isInvalid"]);
    expect(which(of(500, "InternalError"))).toEqual([]);
  });

  test("nothing but a Status answer matches: not an AicrError with the same code, not a plain error", () => {
    // e.g. the client's own "the API server does not serve kind X": NOT_FOUND, but no answer said 404.
    const notServed = new AicrError("NOT_FOUND", "the API server does not serve kind X in v1");
    for (const err of [notServed, new Error("404"), undefined, { status: 404 }])
      expect(which(err)).toEqual([]);
  });

  test("isTransient: throttled, failing or unreachable server; never a refusal or a silent server", () => {
    expect(isTransient(of(429, "TooManyRequests"))).toBe(true);
    expect(isTransient(of(500, "InternalError"))).toBe(true);
    expect(isTransient(of(503, "ServiceUnavailable"))).toBe(true);
    expect(isTransient(of(504, "Timeout"))).toBe(true);
    for (const [code, reason] of [
      [404, "NotFound"],
      [409, "Conflict"],
      [403, "Forbidden"],
      [422, "Invalid"],
    ] as const)
      expect(isTransient(of(code, reason))).toBe(false);
    const reset = Object.assign(new Error("socket closed"), { code: "ECONNRESET" });
    expect(isTransient(toAicrError(reset, "creating ConfigMap demo/x"))).toBe(true);
    expect(isTransient(toAicrError(new NoAnswerError(30_000), "creating ConfigMap demo/x"))).toBe(false);
    expect(isTransient(new Error("boom"))).toBe(false);
  });
});

describe("toAicrError: the operator's words, a remedy on every one", () => {
  const doing = "reading ConfigMap demo/x";
  test("an unreachable server: the errno in words, not the HTTP client's text", () => {
    const refused = Object.assign(new Error("Unable to connect. Is the computer able to access the url?"), {
      code: "ConnectionRefused",
    });
    const text = formatError(toAicrError(refused, doing, "https://10.0.0.1:6443"));
    expect(text).toContain(
      "cannot reach the Kubernetes API server at https://10.0.0.1:6443 (connection refused)",
    );
    expect(text).not.toContain("Is the computer");
    expect(text).toMatch(/\n {2}remedy: \S/);
  });
  test("an untrusted certificate: its reason said once", () => {
    const tls = Object.assign(new Error("unable to verify the first certificate"), {
      code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
    });
    const text = formatError(toAicrError(tls, doing));
    expect(text.match(/unable to verify the first certificate/g)).toHaveLength(1);
    expect(text).toMatch(/\n {2}remedy: .*certificate-authority-data/);
  });
  test("every answer status, an unknown failure and a cancel carry a remedy", () => {
    for (const [code, reason] of [
      [400, "BadRequest"],
      [403, "Forbidden"],
      [404, "NotFound"],
      [409, "Conflict"],
      [422, "Invalid"],
      [429, "TooManyRequests"],
      [500, "InternalError"],
      [503, "ServiceUnavailable"],
    ] as const)
      expect(decoded(answer(code, status(code, reason, "m"))).remedy).toBeString();
    expect(toAicrError(new Error("boom"), doing).remedy).toBeString();
    expect(toAicrError(new DOMException("aborted", "AbortError"), doing).remedy).toBeString();
  });
});

describe("answers from the fake apiserver, through KubeClient", () => {
  let cluster: TestCluster;
  const clients: KubeClient[] = [];
  const connect = (kubeconfig: string): KubeClient => {
    const client = KubeClient.connect({ kubeconfig, env: {} });
    clients.push(client);
    return client;
  };
  const admin = () => connect(cluster.kubeconfigFor("admin"));
  const cm = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: NS } });

  beforeAll(async () => {
    cluster = await startTestCluster("fake", { controllers: false });
    cluster.addUser("nobody", []);
    await cluster.store.create(resource("namespaces"), { metadata: { name: NS } });
  }, CLUSTER_HOOK_MS);
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });
  afterAll(() => cluster?.stop(), CLUSTER_HOOK_MS);

  test("a read of a missing object: NotFound, with the request and the object named", async () => {
    const err = await failure(
      admin().get({ apiVersion: "v1", kind: "ConfigMap", name: "none", namespace: NS }),
    );
    expect(isNotFound(err)).toBe(true);
    expect(err).toMatchObject({
      httpStatus: 404,
      method: "GET",
      path: `/api/v1/namespaces/${NS}/configmaps/none`,
      status: { code: 404, reason: "NotFound", details: { name: "none", kind: "configmaps" } },
    });
    expect(err.message).toBe(`reading ConfigMap ${NS}/none: configmaps "none" not found`);
  });

  test("a second create at the name: AlreadyExists, which is not a Conflict", async () => {
    const client = admin();
    await client.create(cm("twice"));
    const err = await failure(client.create(cm("twice")));
    expect(isAlreadyExists(err)).toBe(true);
    expect(isConflict(err)).toBe(false);
    expect(err).toMatchObject({
      httpStatus: 409,
      method: "POST",
      path: `/api/v1/namespaces/${NS}/configmaps`,
    });
  });

  test("a delete whose UID precondition fails: Conflict", async () => {
    const client = admin();
    await client.create(cm("pinned"));
    const ref = { apiVersion: "v1", kind: "ConfigMap", name: "pinned", namespace: NS };
    const err = await failure(client.delete(ref, { uid: "00000000-0000-0000-0000-000000000000" }));
    expect(isConflict(err)).toBe(true);
    expect(isAlreadyExists(err)).toBe(false);
    expect(err).toMatchObject({ method: "DELETE", status: { reason: "Conflict" } });
  });

  test("an object that fails validation: Invalid, with the field in its causes", async () => {
    const err = await failure(admin().create(cm("Not_A_Name")));
    expect(isInvalid(err)).toBe(true);
    expect(err.status.reason).toBe("Invalid");
    expect(err.status.details?.causes?.map((c) => c.field)).toContain("metadata.name");
  });

  test("a caller without the right: Forbidden; credentials the server does not know: Unauthorized", async () => {
    const ref = { apiVersion: "v1", kind: "ConfigMap", name: "x", namespace: NS };
    const refused = await failure(connect(cluster.kubeconfigFor("nobody")).get(ref));
    expect(isForbidden(refused)).toBe(true);
    expect(refused.status.reason).toBe("Forbidden");
    const stranger = await failure(
      connect(withToken(cluster.kubeconfigFor("admin"), "not-a-token")).get(ref),
    );
    expect(isUnauthorized(stranger)).toBe(true);
    expect(stranger.code).toBe("UNAUTHORIZED");
  });

  test("a refused watch and a missing pod's log are the same error", async () => {
    const path = `/api/v1/namespaces/${NS}/configmaps`;
    const ended = await connect(cluster.kubeconfigFor("nobody")).watch(
      path,
      {},
      { signal: new AbortController().signal, onEvent: () => {} },
    );
    expect(isForbidden(ended)).toBe(true);
    expect(ended).toMatchObject({ method: "GET", path });
    const out = new Writable({ write: (_c, _e, cb) => cb() });
    const log = await failure(
      admin().followLog(
        { namespace: NS, pod: "missing", container: "c" },
        { out, signal: new AbortController().signal, follow: false },
      ),
    );
    expect(isNotFound(log)).toBe(true);
    expect(log.path).toBe(`/api/v1/namespaces/${NS}/pods/missing/log`);
  });

  test("a throttled answer: transient, with the server's Retry-After", async () => {
    const path = `/api/v1/namespaces/${NS}/configmaps/throttled`;
    const fault = cluster.faults.add({ method: "GET", path, status: 429, retryAfterSeconds: 2 });
    try {
      const err = await failure(
        admin().get({ apiVersion: "v1", kind: "ConfigMap", name: "throttled", namespace: NS }),
      );
      expect(isTransient(err)).toBe(true);
      expect(err.retryAfterSeconds).toBe(2);
      expect(err.code).toBe("RATE_LIMIT_EXCEEDED");
    } finally {
      fault.remove();
    }
  });
});

const NS = "status-errors";

const failure = (p: Promise<unknown>): Promise<KubeStatusError> => rejection(p, KubeStatusError);

/** A copy of a kubeconfig whose user presents `token` instead, beside it (removed with the cluster). */
function withToken(path: string, token: string): string {
  const doc = parse(readFileSync(path, "utf8")) as { users: { user: Record<string, unknown> }[] };
  for (const u of doc.users) u.user = { token };
  const out = join(mkdtempSync(join(dirname(path), "token-")), "kubeconfig");
  writeFileSync(out, stringify(doc), { mode: 0o600 });
  return out;
}
