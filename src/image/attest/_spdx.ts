/**
 * SPDX 2.3 JSON SBOMs: one per binary (aicr, the npm packages with code in it, Bun's runtime) and
 * one per platform image (the image, the binary and what it holds, Debian's libc6). Deterministic:
 * keys in a fixed order, packages sorted, the build date as `created`. Pure.
 */
import type { ImageInfo } from "../_aicr-image.ts";
import {
  type BuildFacts,
  type DebFacts,
  integrityDigests,
  type NpmPackage,
  PROJECT_URL,
  sourceUri,
} from "./_facts.ts";
import { spdxExpression } from "./_license.ts";
import { debPurl, genericPurl, npmPurl, ociPurl } from "./_purl.ts";

export interface SpdxChecksum {
  algorithm: string;
  checksumValue: string;
}

export interface SpdxPackage {
  name: string;
  SPDXID: string;
  versionInfo: string;
  packageFileName?: string;
  supplier?: string;
  downloadLocation: string;
  filesAnalyzed: false;
  checksums: SpdxChecksum[];
  licenseConcluded: string;
  licenseDeclared: string;
  licenseComments?: string;
  copyrightText: string;
  comment?: string;
  primaryPackagePurpose: string;
  builtDate?: string;
  externalRefs: { referenceCategory: string; referenceType: string; referenceLocator: string }[];
}

export interface SpdxRelationship {
  spdxElementId: string;
  relationshipType: string;
  relatedSpdxElement: string;
}

export interface SpdxDocument {
  spdxVersion: "SPDX-2.3";
  dataLicense: "CC0-1.0";
  SPDXID: "SPDXRef-DOCUMENT";
  name: string;
  documentNamespace: string;
  creationInfo: { created: string; creators: string[] };
  packages: SpdxPackage[];
  relationships: SpdxRelationship[];
}

const NOASSERTION = "NOASSERTION";
const EPOCH = "1970-01-01T00:00:00Z";
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const hex = (digest: string): string => digest.replace(/^sha256:/, "");
const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** SPDX and provenance files: two-space JSON and a final newline (the file and the referrer layer alike). */
export const attestationBytes = (value: unknown): Uint8Array =>
  new TextEncoder().encode(`${JSON.stringify(value, null, 2)}\n`);

/** Hands out SPDXIDs (`SPDXRef-` + [A-Za-z0-9.-]), unique within one document. */
function idMaker(): (...parts: string[]) => string {
  const taken = new Set<string>();
  return (...parts) => {
    const base = `SPDXRef-${parts.map((p) => p.replace(/[^A-Za-z0-9.-]+/g, "-").replace(/^-+|-+$/g, "")).join("-")}`;
    let id = base;
    for (let n = 2; taken.has(id); n++) id = `${base}-${n}`;
    taken.add(id);
    return id;
  };
}

const purlRef = (locator: string): SpdxPackage["externalRefs"][number] => ({
  referenceCategory: "PACKAGE-MANAGER",
  referenceType: "purl",
  referenceLocator: locator,
});

function license(declared: string | undefined): Pick<SpdxPackage, "licenseDeclared" | "licenseComments"> {
  const valid = spdxExpression(declared);
  if (valid) return { licenseDeclared: valid };
  return declared
    ? { licenseDeclared: NOASSERTION, licenseComments: `declared as ${JSON.stringify(declared)}` }
    : { licenseDeclared: NOASSERTION };
}

function npmPackage(p: NpmPackage, id: string, comment?: string): SpdxPackage {
  const digests = integrityDigests(p.integrity);
  const { licenseDeclared, licenseComments } = license(p.license);
  return {
    name: p.name,
    SPDXID: id,
    versionInfo: p.version,
    downloadLocation: p.resolved ?? NOASSERTION,
    filesAnalyzed: false,
    checksums: Object.keys(digests)
      .sort()
      .map((a) => ({ algorithm: a.toUpperCase(), checksumValue: digests[a]! })),
    licenseConcluded: NOASSERTION,
    licenseDeclared,
    ...(licenseComments ? { licenseComments } : {}),
    copyrightText: NOASSERTION,
    ...(comment ? { comment } : {}),
    primaryPackagePurpose: "LIBRARY",
    externalRefs: [purlRef(npmPurl(p.name, p.version))],
  };
}

const RUNTIME_COMMENT = "Bun's runtime, which bun build --compile makes the executable of";

/** aicr itself: the binary, and the npm packages and Bun runtime in it (the binary package first). */
function binaryPackages(
  facts: BuildFacts,
  sha256: string,
  fileName: string,
  id: ReturnType<typeof idMaker>,
): { binary: SpdxPackage; contents: SpdxPackage[] } {
  const { licenseDeclared } = license(facts.license);
  const binary: SpdxPackage = {
    name: "aicr",
    SPDXID: id("Package", "aicr"),
    versionInfo: facts.version,
    packageFileName: fileName,
    downloadLocation: sourceUri(facts.revision) ?? NOASSERTION,
    filesAnalyzed: false,
    checksums: [{ algorithm: "SHA256", checksumValue: sha256 }],
    licenseConcluded: NOASSERTION,
    licenseDeclared,
    copyrightText: NOASSERTION,
    comment: `${facts.target} build of revision ${facts.revision} (${facts.command}, Bun ${facts.bun})`,
    primaryPackagePurpose: "APPLICATION",
    ...(ISO.test(facts.built) ? { builtDate: facts.built } : {}),
    externalRefs: [purlRef(genericPurl("aicr", facts.version))],
  };
  const npm = [
    ...facts.packages.map((p) => ({ p, comment: undefined as string | undefined })),
    { p: facts.runtime, comment: RUNTIME_COMMENT },
  ].sort((a, b) => compare(a.p.name, b.p.name) || compare(a.p.version, b.p.version));
  const contents = npm.map(({ p, comment }) =>
    npmPackage(p, id("Package", "npm", p.name, p.version), comment),
  );
  return { binary, contents };
}

const relation = (from: string, type: string, to: string): SpdxRelationship => ({
  spdxElementId: from,
  relationshipType: type,
  relatedSpdxElement: to,
});

function document(
  name: string,
  namespace: string,
  facts: BuildFacts,
): Omit<SpdxDocument, "packages" | "relationships"> {
  return {
    spdxVersion: "SPDX-2.3",
    dataLicense: "CC0-1.0",
    SPDXID: "SPDXRef-DOCUMENT",
    name,
    documentNamespace: `${PROJECT_URL}/spdx/${namespace}`,
    creationInfo: {
      created: ISO.test(facts.built) ? facts.built : EPOCH,
      creators: [`Tool: aicr-${facts.version}`],
    },
  };
}

/** The SBOM of one binary: `name` is its file name (aicr-<target>), `sha256` its digest (hex). */
export function binarySbom(facts: BuildFacts, binary: { name: string; sha256: string }): SpdxDocument {
  const id = idMaker();
  const { binary: aicr, contents } = binaryPackages(facts, binary.sha256, binary.name, id);
  const docName = `${binary.name}-${facts.version}`;
  return {
    ...document(docName, `${docName}-${binary.sha256}`, facts),
    packages: [aicr, ...contents],
    relationships: [
      relation("SPDXRef-DOCUMENT", "DESCRIBES", aicr.SPDXID),
      ...contents.map((p) => relation(aicr.SPDXID, "CONTAINS", p.SPDXID)),
    ],
  };
}

function debPackage(deb: DebFacts, id: string): SpdxPackage {
  return {
    name: deb.name,
    SPDXID: id,
    versionInfo: deb.version,
    packageFileName: deb.url.split("/").pop() ?? deb.name,
    supplier: "Organization: Debian",
    downloadLocation: deb.url,
    filesAnalyzed: false,
    checksums: [{ algorithm: "SHA256", checksumValue: deb.sha256 }],
    licenseConcluded: NOASSERTION,
    licenseDeclared: NOASSERTION,
    copyrightText: NOASSERTION,
    comment: "The image's runtime layer: the dynamic loader and C libraries taken from this package",
    primaryPackagePurpose: "LIBRARY",
    externalRefs: [purlRef(debPurl(deb.name, deb.version, deb.architecture, deb.distro))],
  };
}

/** The SBOM of one platform image: its manifest digest names it; the binary is the image's (sha256 hex). */
export function imageSbom(info: ImageInfo, manifestDigest: string, binarySha256: string): SpdxDocument {
  const facts = info.build;
  const id = idMaker();
  const docName = `aicr-image-${info.version}-linux-${info.arch}`;
  const image: SpdxPackage = {
    name: info.repository,
    SPDXID: id("Image"),
    versionInfo: info.tag,
    downloadLocation: NOASSERTION,
    filesAnalyzed: false,
    checksums: [{ algorithm: "SHA256", checksumValue: hex(manifestDigest) }],
    licenseConcluded: NOASSERTION,
    licenseDeclared: NOASSERTION,
    copyrightText: NOASSERTION,
    comment: `The linux/${info.arch} image manifest ${manifestDigest}`,
    primaryPackagePurpose: "CONTAINER",
    externalRefs: [purlRef(ociPurl(info.repository, manifestDigest, info.arch))],
  };
  const { binary, contents } = binaryPackages(facts, binarySha256, "/usr/local/bin/aicr", id);
  const libc = debPackage(
    info.runtimeDeb,
    id("Package", "deb", info.runtimeDeb.name, info.runtimeDeb.version),
  );
  return {
    ...document(docName, `${docName}-${hex(manifestDigest)}`, facts),
    packages: [image, binary, libc, ...contents],
    relationships: [
      relation("SPDXRef-DOCUMENT", "DESCRIBES", image.SPDXID),
      relation(image.SPDXID, "CONTAINS", binary.SPDXID),
      relation(image.SPDXID, "CONTAINS", libc.SPDXID),
      ...contents.map((p) => relation(binary.SPDXID, "CONTAINS", p.SPDXID)),
    ],
  };
}
