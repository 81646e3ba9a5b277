/**
 * Signs an OCI archive in memory: the root (the image index, or the one manifest of an `image save`
 * archive), every manifest below it, and every SBOM and provenance referrer — each gets a cosign
 * signature referrer (_signature.ts) added to the layout by appendReferrers. Signature referrers are
 * not signed. Deterministic (RFC 6979 nonces) and idempotent: a subject that already carries a
 * signature by this key over the same payload gets none added, so signing twice gives the same bytes.
 * Pure over the archive's bytes (throws ArchiveError for an archive that does not read).
 */
import { AicrError } from "../../core/errors.ts";
import { type OciArchive, type Referrer, readOciArchive } from "../_archive.ts";
import { appendReferrers } from "../_layout.ts";
import { type Descriptor, isIndexMedia } from "../_oci.ts";
import { ARTIFACT, type Artifact } from "../_referrers.ts";
import type { SigningKey } from "./_keys.ts";
import { buildPayload, repositoryOf } from "./_payload.ts";
import { alreadySigned, signatureArtifact } from "./_signature.ts";

/** The annotation of index.json's root naming the image (`registry/repository:tag`). */
export const IMAGE_NAME_ANNOTATION = "io.containerd.image.name";

export type SignedKind = "index" | "manifest" | "sbom" | "provenance";

export interface SignedSubject {
  digest: string;
  kind: SignedKind;
  /** A platform manifest's `os/architecture[/variant]`. */
  platform?: string;
  /** For an SBOM or provenance: the manifest it describes. */
  describes?: string;
  /** Whether this run added its signature (false: the archive already had one by this key). */
  added: boolean;
}

export interface SignResult {
  /** The new archive (the input's very bytes when nothing was added). */
  bytes: Uint8Array;
  /** Every subject signed by the key, in the layout's order. */
  signed: SignedSubject[];
  /** How many signature referrers were added. */
  added: number;
  /** The docker-reference every payload names. */
  repository: string;
}

/** The repository the payloads name: the roots' image name without its tag, which all roots must share. */
export function archiveRepository(oci: OciArchive): string {
  const names = [...new Set(oci.roots.map((r) => r.annotations?.[IMAGE_NAME_ANNOTATION] ?? ""))];
  if (names.length !== 1 || names[0] === "")
    throw new AicrError(
      "INVALID_REQUEST",
      names.length > 1
        ? `the archive names ${names.length} images (${names.map((n) => JSON.stringify(n)).join(", ")}); a signature names one repository`
        : `the archive's index.json has no ${IMAGE_NAME_ANNOTATION} annotation, so the repository its signatures name is unknown`,
      {
        remedy:
          "sign an archive written by npm run image or aicr image save (one image, named by that annotation)",
      },
    );
  const repository = repositoryOf(names[0] as string);
  if (!repository)
    throw new AicrError(
      "INVALID_REQUEST",
      `the archive's image name ${JSON.stringify(names[0])} is not an image reference`,
      { remedy: "rebuild the archive (npm run image, aicr image save)" },
    );
  return repository;
}

interface Target {
  descriptor: Descriptor;
  subject: Omit<SignedSubject, "added">;
}

const platformOf = (d: Descriptor): string | undefined =>
  d.platform
    ? [d.platform.os, d.platform.architecture, d.platform.variant].filter(Boolean).join("/")
    : undefined;

const REFERRER_KINDS: Record<string, SignedKind> = {
  [ARTIFACT.spdx]: "sbom",
  [ARTIFACT.intoto]: "provenance",
};

const kindOfReferrer = (r: Referrer): SignedKind | undefined =>
  REFERRER_KINDS[r.descriptor.artifactType ?? r.manifest.artifactType ?? ""];

/** What gets signed: every image index and manifest from the roots down, then the SBOMs and provenance. */
export function signingTargets(oci: OciArchive): Target[] {
  const targets: Target[] = oci.manifests.map((d) => {
    const platform = platformOf(d);
    return {
      descriptor: d,
      subject: {
        digest: d.digest,
        kind: isIndexMedia(d.mediaType) ? "index" : "manifest",
        ...(platform ? { platform } : {}),
      },
    };
  });
  for (const r of oci.referrers) {
    const kind = kindOfReferrer(r);
    if (!kind) continue;
    targets.push({
      descriptor: r.descriptor,
      subject: { digest: r.descriptor.digest, kind, describes: String(r.manifest.subject?.digest) },
    });
  }
  return targets;
}

export function signArchive(archive: Uint8Array, key: SigningKey): SignResult {
  const oci = readOciArchive(archive);
  const repository = archiveRepository(oci);
  const artifacts: Artifact[] = [];
  const signed: SignedSubject[] = [];
  for (const { descriptor, subject } of signingTargets(oci)) {
    const payload = buildPayload(repository, descriptor.digest);
    const present = alreadySigned(oci.referrersOf(descriptor.digest), oci.blob, payload, key.verification);
    if (!present) artifacts.push(signatureArtifact(descriptor, repository, key));
    signed.push({ ...subject, added: !present });
  }
  return {
    bytes: artifacts.length > 0 ? appendReferrers(archive, artifacts) : archive,
    signed,
    added: artifacts.length,
    repository,
  };
}
