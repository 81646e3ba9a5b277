/**
 * URLs and references as they may be shown (pure): credentials typed into them never reach a
 * message, a log line or a report. A user:password@ part is masked (`***@`), and so is every query
 * value (`?token=***&expires=***`: a pre-signed URL's signature is as good as a password) and the
 * fragment; the scheme, host, port, path and query keys stay, so the operator still sees which URL
 * it was.
 */

/** `[scheme://]user[:password]@` before the host: credentials typed into a reference. */
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)?[^/@]*@/i;

/** The reference as it may be shown: a user:password@ part is masked (`***@`), never echoed. */
export const maskUserinfo = (value: string): string =>
  value.replace(USERINFO, (_m, scheme: string | undefined) => `${scheme ?? ""}***@`);

/** One `key=value` of a query with its value masked; a part without `=` is masked whole. */
const maskPart = (part: string): string => {
  if (part === "") return part;
  const eq = part.indexOf("=");
  return eq < 0 ? "***" : `${part.slice(0, eq)}=***`;
};

/**
 * A URL (parsed or as typed, valid or not) as it may be shown: user:password@ → `***@`, each query
 * value → `***`, a fragment → `#***`.
 */
export function maskUrl(value: string | URL): string {
  const text = typeof value === "string" ? value : value.href;
  const hashAt = text.indexOf("#");
  const beforeHash = hashAt < 0 ? text : text.slice(0, hashAt);
  const fragment = hashAt < 0 ? "" : hashAt === text.length - 1 ? "#" : "#***";
  const queryAt = beforeHash.indexOf("?");
  const base = queryAt < 0 ? beforeHash : beforeHash.slice(0, queryAt);
  const query =
    queryAt < 0
      ? ""
      : `?${beforeHash
          .slice(queryAt + 1)
          .split("&")
          .map(maskPart)
          .join("&")}`;
  return `${maskUserinfo(base)}${query}${fragment}`;
}
