/**
 * Archives for the verify tests, built in-process the way npm run image and aicr image sign build
 * them: the aicr image of fake layers (_fixtures.ts) for one or two platforms, an SPDX SBOM and an
 * in-toto SLSA provenance statement attached to each platform manifest, signed by signArchive.
 */
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Arch, aicrLayout } from "../../src/image/_aicr-image.ts";
import { layoutArchive } from "../../src/image/_layout.ts";
import type { Descriptor } from "../../src/image/_oci.ts";
import {
  ARTIFACT,
  type Artifact,
  buildArtifact,
  PREDICATE_TYPE_ANNOTATION,
  TITLE_ANNOTATION,
} from "../../src/image/_referrers.ts";
import { loadSigningKey, type SigningKey } from "../../src/image/sign/_keys.ts";
import { fakeImage } from "./_fixtures.ts";

export const REPOSITORY = "registry.example/team/aicr";

export interface TestKey {
  signing: SigningKey;
  /** The public key, PEM (what --key takes). */
  pub: string;
  /** The private key, PEM (what verify must refuse). */
  priv: string;
}

export function newKey(): TestKey {
  const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const priv = pair.privateKey.export({ format: "pem", type: "pkcs8" }) as string;
  const pub = pair.publicKey.export({ format: "pem", type: "spki" }) as string;
  return { signing: loadSigningKey(priv, { flag: "--key", path: "test.pem" }), pub, priv };
}

const json = (value: unknown): Uint8Array => new TextEncoder().encode(`${JSON.stringify(value, null, 2)}\n`);

/** An SPDX 2.3 document describing the image `named` (default: the subject's digest). */
export function sbomFor(subject: Descriptor, arch: string, named = subject.digest): Artifact {
  const name = `aicr-image-1.2.3-linux-${arch}.spdx.json`;
  const doc = {
    spdxVersion: "SPDX-2.3",
    dataLicense: "CC0-1.0",
    SPDXID: "SPDXRef-DOCUMENT",
    name: `aicr-image-1.2.3-linux-${arch}`,
    documentNamespace: `https://example.invalid/spdx/${named}`,
    creationInfo: { created: "2026-01-01T00:00:00Z", creators: ["Tool: aicr-1.2.3"] },
    packages: [
      {
        SPDXID: "SPDXRef-Package-image",
        name: "aicr",
        versionInfo: named,
        downloadLocation: "NOASSERTION",
        externalRefs: [
          {
            referenceCategory: "PACKAGE-MANAGER",
            referenceType: "purl",
            referenceLocator: `pkg:oci/aicr@${encodeURIComponent(named)}?arch=${arch}&repository_url=${REPOSITORY}`,
          },
        ],
      },
    ],
    relationships: [
      {
        spdxElementId: "SPDXRef-DOCUMENT",
        relationshipType: "DESCRIBES",
        relatedSpdxElement: "SPDXRef-Package-image",
      },
    ],
  };
  return buildArtifact({
    artifactType: ARTIFACT.spdx,
    subject,
    layers: [{ mediaType: ARTIFACT.spdx, data: json(doc), annotations: { [TITLE_ANNOTATION]: name } }],
  });
}

/** An in-toto statement v1 with a SLSA provenance v1 predicate about `named` (default: the subject). */
export function provenanceFor(
  subject: Descriptor,
  named = subject.digest,
  predicateType = "https://slsa.dev/provenance/v1",
): Artifact {
  const statement = {
    _type: "https://in-toto.io/Statement/v1",
    subject: [{ name: REPOSITORY, digest: { sha256: named.slice("sha256:".length) } }],
    predicateType,
    predicate: {
      buildDefinition: { buildType: "https://example.invalid/build", externalParameters: {} },
      runDetails: { builder: { id: "https://example.invalid/builder" }, metadata: {} },
    },
  };
  return buildArtifact({
    artifactType: ARTIFACT.intoto,
    subject,
    layers: [{ mediaType: ARTIFACT.intoto, data: json(statement) }],
    annotations: { [PREDICATE_TYPE_ANNOTATION]: "https://slsa.dev/provenance/v1" },
  });
}

export interface TestImage {
  /** The archive, not signed. */
  archive: Uint8Array;
  /** What the tag names: the index (two platforms) or the manifest (one). */
  root: string;
  manifests: Record<Arch, Descriptor | undefined>;
}

export interface ImageOptions {
  platforms?: 1 | 2;
  /** Per platform, which of its referrers to leave out. */
  without?: Partial<Record<Arch, ("sbom" | "provenance")[]>>;
  /** Referrers of another making, given the platform manifests. */
  extra?: (m: Record<Arch, Descriptor | undefined>) => Artifact[];
}

export function testImage(o: ImageOptions = {}): TestImage {
  const archs: Arch[] = (o.platforms ?? 2) === 2 ? ["amd64", "arm64"] : ["amd64"];
  const built = archs.map((a) => fakeImage(a));
  const manifests: Record<Arch, Descriptor | undefined> = { amd64: undefined, arm64: undefined };
  for (const [i, a] of archs.entries()) manifests[a] = built[i]!.image.descriptor;
  const referrers = archs.flatMap((a) => {
    const d = manifests[a]!;
    const skip = o.without?.[a] ?? [];
    return [
      ...(skip.includes("sbom") ? [] : [sbomFor(d, a)]),
      ...(skip.includes("provenance") ? [] : [provenanceFor(d)]),
    ];
  });
  const layout = aicrLayout(
    built.map((b) => b.image),
    built.map((b) => b.info),
    [...referrers, ...(o.extra?.(manifests) ?? [])],
  );
  return { archive: layoutArchive(layout), root: layout.digest, manifests };
}

/** A temp directory with the files written in it; returns their paths by name. */
export function writeFiles(
  files: Record<string, Uint8Array | string>,
): Record<string, string> & { dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "aicr-verify-"));
  const paths: Record<string, string> = {};
  for (const [name, data] of Object.entries(files)) {
    paths[name] = join(dir, name);
    writeFileSync(paths[name], data);
  }
  return Object.assign(paths, { dir });
}
