/**
 * Independent checks of the SBOM and provenance shapes (written from the SPDX 2.3, purl, in-toto
 * Statement v1 and SLSA provenance v1 specifications, not from src/image/attest/): each returns the
 * list of problems found, empty when the document conforms.
 */

const SPDXID = /^SPDXRef-[A-Za-z0-9.-]+$/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const HEX_LENGTH: Record<string, number> = { SHA1: 40, SHA256: 64, SHA384: 96, SHA512: 128, MD5: 32 };
const PURPOSES = [
  "APPLICATION",
  "FRAMEWORK",
  "LIBRARY",
  "CONTAINER",
  "OPERATING-SYSTEM",
  "DEVICE",
  "FIRMWARE",
  "SOURCE",
  "ARCHIVE",
  "FILE",
  "INSTALL",
  "OTHER",
];
/** The licence ids the SBOMs may name (all on the SPDX licence list). */
const LICENSE_IDS = new Set([
  "MIT",
  "ISC",
  "Apache-2.0",
  "Unlicense",
  "BSD-2-Clause",
  "BSD-3-Clause",
  "0BSD",
]);

/** purl: pkg:type/namespace/name@version?qualifiers — percent-encoded, qualifier keys sorted. */
export function purlProblems(purl: string): string[] {
  const m = /^pkg:([a-z][a-z0-9.+-]*)\/([^@?#]+)@([^?#]+)(?:\?([^#]+))?$/.exec(purl);
  if (!m) return [`purl ${purl}: not pkg:type/name@version[?qualifiers]`];
  const problems: string[] = [];
  const [, , path, version, query] = m;
  const encoded = /^(?:[A-Za-z0-9._~-]|%[0-9A-F]{2})+$/;
  for (const segment of path!.split("/"))
    if (!encoded.test(segment)) problems.push(`purl ${purl}: path segment ${segment} is not percent-encoded`);
  if (!encoded.test(version!)) problems.push(`purl ${purl}: version ${version} is not percent-encoded`);
  if (query) {
    const keys = query.split("&").map((q) => q.split("=")[0]!);
    if (keys.join() !== [...keys].sort().join()) problems.push(`purl ${purl}: qualifiers not sorted`);
    for (const q of query.split("&"))
      if (!/^[a-z][a-z0-9._-]*=(?:[A-Za-z0-9._~/:-]|%[0-9A-F]{2})+$/.test(q))
        problems.push(`purl ${purl}: qualifier ${q} malformed`);
  }
  return problems;
}

/** A licence expression over LICENSE_IDS with AND/OR/parentheses, or NOASSERTION/NONE. */
function licenseOk(value: unknown): boolean {
  if (value === "NOASSERTION" || value === "NONE") return true;
  if (typeof value !== "string") return false;
  const tokens = value.match(/\(|\)|[^\s()]+/g) ?? [];
  let depth = 0;
  let expectOperand = true;
  for (const t of tokens) {
    if (t === "(") {
      if (!expectOperand) return false;
      depth++;
    } else if (t === ")") {
      if (expectOperand || --depth < 0) return false;
    } else if (t === "AND" || t === "OR") {
      if (expectOperand) return false;
      expectOperand = true;
    } else {
      if (!expectOperand || !LICENSE_IDS.has(t)) return false;
      expectOperand = false;
    }
  }
  return depth === 0 && !expectOperand;
}

const DOWNLOAD = /^(NOASSERTION|NONE|https?:\/\/\S+|git\+https:\/\/\S+)$/;

/** SPDX 2.3 JSON: the document's required fields, every package's, every relationship's ids. */
export function spdxProblems(doc: any): string[] {
  const p: string[] = [];
  const need = (cond: boolean, what: string) => {
    if (!cond) p.push(what);
  };
  need(doc.spdxVersion === "SPDX-2.3", "spdxVersion is not SPDX-2.3");
  need(doc.dataLicense === "CC0-1.0", "dataLicense is not CC0-1.0");
  need(doc.SPDXID === "SPDXRef-DOCUMENT", "SPDXID is not SPDXRef-DOCUMENT");
  need(typeof doc.name === "string" && doc.name.length > 0, "no name");
  need(/^https?:\/\/[^#\s]+$/.test(doc.documentNamespace ?? ""), "documentNamespace is not a URI without #");
  need(ISO_UTC.test(doc.creationInfo?.created ?? ""), "creationInfo.created is not ISO 8601 UTC");
  need(
    Array.isArray(doc.creationInfo?.creators) &&
      doc.creationInfo.creators.length > 0 &&
      doc.creationInfo.creators.every((c: string) => /^(Tool|Organization|Person): \S/.test(c)),
    "creators missing or malformed",
  );
  const ids = new Set<string>(["SPDXRef-DOCUMENT"]);
  for (const pkg of doc.packages ?? []) {
    const at = `package ${pkg.name}`;
    need(typeof pkg.name === "string" && pkg.name.length > 0, `${at}: no name`);
    need(SPDXID.test(pkg.SPDXID ?? ""), `${at}: SPDXID ${pkg.SPDXID} does not match SPDXRef-[A-Za-z0-9.-]+`);
    need(!ids.has(pkg.SPDXID), `${at}: SPDXID ${pkg.SPDXID} not unique`);
    ids.add(pkg.SPDXID);
    need(typeof pkg.versionInfo === "string" && pkg.versionInfo.length > 0, `${at}: no versionInfo`);
    need(DOWNLOAD.test(pkg.downloadLocation ?? ""), `${at}: downloadLocation ${pkg.downloadLocation}`);
    need(pkg.filesAnalyzed === false, `${at}: filesAnalyzed must be false (no files listed)`);
    need(licenseOk(pkg.licenseConcluded), `${at}: licenseConcluded ${pkg.licenseConcluded}`);
    need(licenseOk(pkg.licenseDeclared), `${at}: licenseDeclared ${pkg.licenseDeclared}`);
    need(typeof pkg.copyrightText === "string", `${at}: no copyrightText`);
    need(
      PURPOSES.includes(pkg.primaryPackagePurpose),
      `${at}: primaryPackagePurpose ${pkg.primaryPackagePurpose}`,
    );
    need(Array.isArray(pkg.checksums) && pkg.checksums.length > 0, `${at}: no checksums`);
    for (const c of pkg.checksums ?? [])
      need(
        HEX_LENGTH[c.algorithm] !== undefined &&
          new RegExp(`^[0-9a-f]{${HEX_LENGTH[c.algorithm]}}$`).test(c.checksumValue),
        `${at}: checksum ${c.algorithm} ${c.checksumValue}`,
      );
    const purls = (pkg.externalRefs ?? []).filter((r: any) => r.referenceType === "purl");
    need(purls.length === 1, `${at}: ${purls.length} purls`);
    for (const r of purls) {
      need(r.referenceCategory === "PACKAGE-MANAGER", `${at}: purl category ${r.referenceCategory}`);
      p.push(...purlProblems(r.referenceLocator));
    }
  }
  need(Array.isArray(doc.relationships) && doc.relationships.length > 0, "no relationships");
  for (const r of doc.relationships ?? []) {
    need(ids.has(r.spdxElementId), `relationship from unknown ${r.spdxElementId}`);
    need(ids.has(r.relatedSpdxElement), `relationship to unknown ${r.relatedSpdxElement}`);
    need(["DESCRIBES", "CONTAINS"].includes(r.relationshipType), `relationship type ${r.relationshipType}`);
  }
  // every package is reachable from the document
  const reach = new Set(["SPDXRef-DOCUMENT"]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const r of doc.relationships ?? [])
      if (reach.has(r.spdxElementId) && !reach.has(r.relatedSpdxElement)) {
        reach.add(r.relatedSpdxElement);
        grew = true;
      }
  }
  for (const id of ids) need(reach.has(id), `${id} is not reachable from the document`);
  return p;
}

/** in-toto Statement v1 with a SLSA provenance v1 predicate. */
export function provenanceProblems(s: any): string[] {
  const p: string[] = [];
  const need = (cond: boolean, what: string) => {
    if (!cond) p.push(what);
  };
  need(s._type === "https://in-toto.io/Statement/v1", "_type");
  need(s.predicateType === "https://slsa.dev/provenance/v1", "predicateType");
  need(Array.isArray(s.subject) && s.subject.length > 0, "no subject");
  for (const sub of s.subject ?? [])
    need(
      typeof sub.name === "string" && /^[0-9a-f]{64}$/.test(sub.digest?.sha256 ?? ""),
      "subject malformed",
    );
  const def = s.predicate?.buildDefinition;
  need(typeof def?.buildType === "string" && /^https:\/\//.test(def.buildType), "buildType is not a URI");
  need(typeof def?.externalParameters === "object", "no externalParameters");
  for (const d of def?.resolvedDependencies ?? []) {
    need(typeof d.uri === "string" || typeof d.name === "string", "a dependency without uri or name");
    need(Object.keys(d.digest ?? {}).length > 0, `dependency ${d.name ?? d.uri} has no digest`);
    for (const [algo, value] of Object.entries(d.digest ?? {}))
      need(
        /^[0-9a-f]+$/.test(String(value)) && (algo !== "sha256" || String(value).length === 64),
        `dependency ${d.name ?? d.uri}: ${algo} ${value}`,
      );
  }
  need(/^https:\/\//.test(s.predicate?.runDetails?.builder?.id ?? ""), "builder.id is not a URI");
  return p;
}
