/** Wire helpers: JSON responses, Status bodies, request body decoding. */
import { parse as parseYaml } from "yaml";
import { ApiStatusError, badRequest, unsupportedMediaType } from "./errors.ts";

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  // Go's JSON encoder ends the body with a newline.
  const text = `${JSON.stringify(body)}\n`;
  // A whole body at once, with its length, as the apiserver writes non-streaming answers (not chunked).
  return new Response(text, {
    status,
    headers: {
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(text)),
      ...headers,
    },
  });
}

export function errorResponse(e: unknown): Response {
  if (e instanceof ApiStatusError) {
    const headers: Record<string, string> = {};
    const retry = e.status.details?.retryAfterSeconds;
    if (retry !== undefined) headers["retry-after"] = String(retry);
    return json(e.status, e.code, headers);
  }
  if (isApplyConflict(e)) {
    const err = new ApiStatusError(409, "Conflict", e.message, { causes: e.causes });
    return json(err.status, 409);
  }
  const err = new ApiStatusError(
    500,
    "InternalError",
    `Internal error occurred: ${(e as Error)?.message ?? e}`,
  );
  return json(err.status, 500);
}

function isApplyConflict(
  e: unknown,
): e is Error & { causes: { type: string; message: string; field: string }[] } {
  return e instanceof Error && e.name === "ApplyConflictError";
}

const REASONS: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  409: "Conflict",
  410: "Gone",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

/** A Status error for an arbitrary code (used by injected faults). */
export function statusError(code: number, message?: string, retryAfterSeconds?: number): ApiStatusError {
  const reason = REASONS[code] ?? "Unknown";
  const details = retryAfterSeconds === undefined ? undefined : { retryAfterSeconds };
  return new ApiStatusError(code, reason, message ?? `injected fault: ${reason}`, details);
}

const PROTOBUF = "application/vnd.kubernetes.protobuf";
const DECODED = ["application/json", "application/yaml"];

/** The media types a create or update body may have, as the apiserver lists them in its 415 (custom resources too). */
export function writeMediaTypes(): string[] {
  return [...DECODED, PROTOBUF];
}

/**
 * Decodes a JSON (or YAML) body. With `accepted` (create/update), any other media type is 415 as on the
 * apiserver. Protobuf is refused with 415 unless a decoder is given.
 */
export async function readBody(
  req: Request,
  protobuf?: (b: Uint8Array) => unknown,
  accepted?: string[],
): Promise<unknown> {
  const type = (req.headers.get("content-type") || "application/json").split(";")[0]!.trim().toLowerCase();
  if (accepted && !accepted.includes(type)) throw unsupportedMediaType(accepted);
  if (type.startsWith(PROTOBUF)) {
    // Simplification: the fake speaks JSON (and YAML); protobuf is read only where a decoder is given.
    if (!protobuf) throw unsupportedMediaType(DECODED);
    try {
      return protobuf(new Uint8Array(await req.arrayBuffer()));
    } catch (e) {
      throw badRequest(`the protobuf body could not be decoded: ${(e as Error).message}`);
    }
  }
  const text = await req.text();
  if (text.trim() === "") return undefined;
  try {
    if (type.includes("yaml")) return parseYaml(text);
    return JSON.parse(text);
  } catch (e) {
    throw badRequest(`the body of the request could not be decoded: ${(e as Error).message}`);
  }
}

export function successStatus(details: Record<string, unknown>): Record<string, unknown> {
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", details };
}
