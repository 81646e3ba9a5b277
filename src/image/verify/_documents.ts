/**
 * What an SBOM or a provenance statement must say about the manifest it is attached to: the SPDX
 * document describes an image package whose purl (`pkg:oci/<name>@<digest>?…`) names that manifest's
 * digest; the in-toto statement (SLSA provenance v1) has that digest among its subjects. Each returns
 * undefined when it does, else what is wrong, as the end of a sentence ("names sha256:… …"). Pure.
 */

export const IN_TOTO_STATEMENT = "https://in-toto.io/Statement/v1";
export const SLSA_PROVENANCE = "https://slsa.dev/provenance/v1";

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function json(bytes: Uint8Array): Record<string, unknown> | undefined {
  try {
    const doc = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) as unknown;
    return isObject(doc) ? doc : undefined;
  } catch {
    return undefined;
  }
}

/** The version of a `pkg:oci/…` purl (the manifest digest, percent-decoded), else undefined. */
export function ociPurlDigest(purl: string): string | undefined {
  const m = /^pkg:oci\/[^@?#]+@([^?#]+)/.exec(purl);
  if (!m?.[1]) return undefined;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return undefined;
  }
}

/** The SPDX IDs the document describes: documentDescribes and its DESCRIBES relationships. */
function described(doc: Record<string, unknown>): Set<string> {
  const ids = new Set(list(doc.documentDescribes).filter((v): v is string => typeof v === "string"));
  const self = typeof doc.SPDXID === "string" ? doc.SPDXID : "SPDXRef-DOCUMENT";
  for (const r of list(doc.relationships)) {
    if (!isObject(r) || r.spdxElementId !== self) continue;
    if (r.relationshipType === "DESCRIBES" && typeof r.relatedSpdxElement === "string")
      ids.add(r.relatedSpdxElement);
  }
  return ids;
}

/** Why an SPDX 2 JSON document is not the SBOM of `digest`, or undefined when it is. */
export function sbomProblem(bytes: Uint8Array, digest: string): string | undefined {
  const doc = json(bytes);
  if (!doc) return "is not a JSON object";
  if (typeof doc.spdxVersion !== "string" || !doc.spdxVersion.startsWith("SPDX-2."))
    return `is not an SPDX 2 document (spdxVersion ${JSON.stringify(doc.spdxVersion ?? null)})`;
  const ids = described(doc);
  const named: string[] = [];
  for (const p of list(doc.packages)) {
    if (!isObject(p) || typeof p.SPDXID !== "string" || !ids.has(p.SPDXID)) continue;
    for (const ref of list(p.externalRefs)) {
      if (!isObject(ref) || ref.referenceType !== "purl" || typeof ref.referenceLocator !== "string")
        continue;
      const version = ociPurlDigest(ref.referenceLocator);
      if (version === digest) return undefined;
      if (version !== undefined) named.push(version);
    }
  }
  if (named.length === 0) return "describes no image package (no pkg:oci purl)";
  return `names ${named.join(", ")} in its image package, not ${digest}`;
}

/** Why an in-toto statement is not SLSA provenance of `digest`, or undefined when it is. */
export function provenanceProblem(bytes: Uint8Array, digest: string): string | undefined {
  const doc = json(bytes);
  if (!doc) return "is not a JSON object";
  if (doc._type !== IN_TOTO_STATEMENT)
    return `is not an in-toto statement v1 (_type ${JSON.stringify(doc._type ?? null)})`;
  if (doc.predicateType !== SLSA_PROVENANCE)
    return `has predicate type ${JSON.stringify(doc.predicateType ?? null)}, not ${SLSA_PROVENANCE}`;
  const hex = digest.slice("sha256:".length);
  const subjects = list(doc.subject).flatMap((s) =>
    isObject(s) && isObject(s.digest) && typeof s.digest.sha256 === "string" ? [s.digest.sha256] : [],
  );
  if (subjects.includes(hex)) return undefined;
  if (subjects.length === 0) return "has no subject with a sha256 digest";
  return `is about ${subjects.map((s) => `sha256:${s}`).join(", ")}, not ${digest}`;
}
