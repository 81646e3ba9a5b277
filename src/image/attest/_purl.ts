/**
 * Package URLs (https://github.com/package-url/purl-spec) for what the SBOMs list: npm packages,
 * Debian packages, the OCI image and aicr itself. Each part percent-encoded as the spec says (a
 * scope's `@` as %40, a version's `+` and a digest's `:` encoded), qualifiers sorted by key. Pure.
 */

const UNRESERVED = /[A-Za-z0-9._~-]/;

/** Percent-encodes every UTF-8 byte outside the unreserved set and `keep`. */
function encode(value: string, keep = ""): string {
  let out = "";
  for (const ch of value) {
    if (UNRESERVED.test(ch) || keep.includes(ch)) out += ch;
    else
      for (const byte of new TextEncoder().encode(ch))
        out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

function purl(
  type: string,
  path: string[],
  version: string,
  qualifiers: Record<string, string> = {},
): string {
  const keys = Object.keys(qualifiers).sort();
  const query = keys.map((k) => `${k}=${encode(qualifiers[k]!, "/:")}`).join("&");
  return `pkg:${type}/${path.map((p) => encode(p)).join("/")}@${encode(version)}${query ? `?${query}` : ""}`;
}

/** `pkg:npm/%40scope/name@version` (or `pkg:npm/name@version`). */
export function npmPurl(name: string, version: string): string {
  const parts = name.split("/");
  if (name.startsWith("@") && parts.length === 2) return purl("npm", parts, version);
  if (parts.length !== 1) throw new Error(`not an npm package name: ${JSON.stringify(name)}`);
  return purl("npm", [name], version);
}

/** `pkg:deb/debian/<name>@<version>?arch=<arch>&distro=<distro>`. */
export const debPurl = (name: string, version: string, arch: string, distro: string): string =>
  purl("deb", ["debian", name], version, { arch, distro });

/**
 * `pkg:oci/<name>@sha256%3A<hex>?arch=<arch>&repository_url=<repository>`: the name is the
 * repository's last path component, lowercased, as the spec asks.
 */
export function ociPurl(repository: string, digest: string, arch: string): string {
  const name = (repository.split("/").pop() ?? repository).toLowerCase();
  return purl("oci", [name], digest, { arch, repository_url: repository });
}

/** `pkg:generic/<name>@<version>`. */
export const genericPurl = (name: string, version: string): string => purl("generic", [name], version);
