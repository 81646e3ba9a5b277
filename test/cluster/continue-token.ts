/** List continue tokens: the list's resourceVersion and the last key served, base64url JSON. */
import { badRequest } from "./errors.ts";

export function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: "meta.k8s.io/v1", rv, start })).toString("base64url");
}

export function decodeContinue(token: string): { rv: number; start: string } {
  try {
    const t = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
    if (typeof t.rv === "number" && typeof t.start === "string") return t;
  } catch {}
  // The apiserver's prefix; what follows names its decoder's complaint about its own token format.
  throw badRequest(
    "invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
  );
}
