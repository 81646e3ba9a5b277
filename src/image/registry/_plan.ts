/**
 * What a push of an archive sends, in the order the registry accepts it: every blob (layers, then
 * config, once each; the referrers' too), then the manifests children first, the root (the one
 * tagged) last, then the referrers of the pushed manifests (and of those referrers), in the
 * layout's order. Pure.
 */
import { AicrError } from "../../core/errors.ts";
import { type OciArchive, orderReferrers } from "../_archive.ts";
import { type Descriptor, type Index, isIndexMedia, isManifestMedia, type Manifest } from "../_oci.ts";
import { ARTIFACT } from "../_referrers.ts";
import type { ManifestBlob } from "./_manifests.ts";
import { TAG } from "./_reference.ts";
import { referrerDescriptor } from "./_referrer-tags.ts";

export interface PlannedReferrer {
  manifest: ManifestBlob;
  /** The digest of the manifest it describes. */
  subject: string;
  /** As a referrers list names it (artifactType, annotations). */
  descriptor: Descriptor;
  /** A cosign signature's simple-signing layers (each with its signature annotation); else none. */
  signatures: Descriptor[];
}

export interface PushPlan {
  tag: string;
  blobs: { digest: string; size: number; bytes: Uint8Array }[];
  /** Children before parents; the last one is the root the tag points at. */
  manifests: ManifestBlob[];
  root: ManifestBlob;
  /** Pushed by digest after the root: subjects before their referrers. */
  referrers: PlannedReferrer[];
}

const REF_NAME = "org.opencontainers.image.ref.name";

/** A ref.name annotation is a tag (`v1`) or a whole reference (`ghcr.io/x/aicr:v1`). */
export function tagOfRefName(name: string | undefined): string | undefined {
  if (!name) return undefined;
  if (TAG.test(name)) return name;
  const tail = name.slice(name.lastIndexOf("/") + 1);
  const colon = tail.lastIndexOf(":");
  const tag = colon >= 0 ? tail.slice(colon + 1) : "";
  return TAG.test(tag) ? tag : undefined;
}

function pickRoot(
  all: Descriptor[],
  wanted: string | undefined,
  path: string,
): { root: Descriptor; tag: string } {
  const tagged = all.map((d) => ({ d, tag: tagOfRefName(d.annotations?.[REF_NAME]) }));
  const names = tagged.map((t) => t.tag).filter(Boolean);
  const matching = wanted === undefined ? tagged : tagged.filter((t) => t.tag === wanted);
  const one = matching.length === 1 ? matching[0] : all.length === 1 ? tagged[0] : undefined;
  if (!one) {
    throw new AicrError(
      "INVALID_REQUEST",
      `The archive ${JSON.stringify(path)} holds ${all.length} images and the destination does not pick one`,
      {
        remedy: `end the destination with the tag of one of them: ${names.map((n) => JSON.stringify(n)).join(", ") || "(none is named)"}`,
        context: { archive: path },
      },
    );
  }
  const tag = wanted ?? one.tag;
  if (!tag) {
    throw new AicrError(
      "INVALID_REQUEST",
      `The archive ${JSON.stringify(path)} names no tag for its image, and the destination has none`,
      {
        remedy: "end the destination with a tag, e.g. registry.example.com/team/aicr:v1",
        context: { archive: path },
      },
    );
  }
  return { root: one.d, tag };
}

export function planPush(archive: OciArchive, wantedTag: string | undefined, path: string): PushPlan {
  const { root, tag } = pickRoot(archive.roots, wantedTag, path);
  const blobs = new Map<string, PushPlan["blobs"][number]>();
  const manifests = new Map<string, ManifestBlob>();
  const bytesOf = (d: Descriptor, what: string): Uint8Array => {
    const bytes = archive.blob(d.digest);
    if (!bytes) {
      throw new AicrError(
        "INVALID_REQUEST",
        `The archive ${JSON.stringify(path)} refers to ${what} ${d.digest} (${d.mediaType}), which aicr cannot push`,
        {
          remedy: "push an archive of image manifests and indexes only (aicr image build writes one)",
          context: { archive: path, digest: d.digest },
        },
      );
    }
    return bytes;
  };
  const addBlobs = (m: Manifest): void => {
    for (const l of [...(m.layers ?? []), m.config]) {
      if (!blobs.has(l.digest))
        blobs.set(l.digest, { digest: l.digest, size: l.size, bytes: bytesOf(l, "blob") });
    }
  };
  const visit = (d: Descriptor): void => {
    if (manifests.has(d.digest)) return;
    const bytes = bytesOf(d, "artifact");
    if (isIndexMedia(d.mediaType)) {
      const child = JSON.parse(new TextDecoder().decode(bytes)) as Index;
      for (const c of child.manifests ?? []) visit(c);
    } else if (isManifestMedia(d.mediaType)) {
      addBlobs(JSON.parse(new TextDecoder().decode(bytes)) as Manifest);
    }
    manifests.set(d.digest, { digest: d.digest, mediaType: d.mediaType, bytes });
  };
  visit(root);
  const list = [...manifests.values()];
  const referrers = referrersOf(
    archive,
    archive.manifests.map((d) => d.digest).filter((d) => manifests.has(d)),
  ).map((r): PlannedReferrer => {
    addBlobs(r.manifest);
    const bytes = bytesOf(r.descriptor, "referrer");
    return {
      manifest: { digest: r.descriptor.digest, mediaType: r.descriptor.mediaType, bytes },
      subject: r.subject,
      descriptor: referrerDescriptor(r.descriptor.digest, bytes.length, r.manifest),
      signatures:
        r.manifest.artifactType === ARTIFACT.cosignSignature
          ? r.manifest.layers.filter((l) => l.mediaType === ARTIFACT.simpleSigning)
          : [],
    };
  });
  return { tag, blobs: [...blobs.values()], manifests: list, root: list[list.length - 1]!, referrers };
}

/** The archive's referrers of the pushed manifests, and of those referrers, in the layout's order. */
function referrersOf(archive: OciArchive, pushed: string[]) {
  const reached = new Set(pushed);
  const entries = archive.referrers.map((r) => ({ ...r, subject: String(r.manifest.subject?.digest) }));
  for (let grew = true; grew; ) {
    grew = false;
    for (const e of entries)
      if (reached.has(e.subject) && !reached.has(e.descriptor.digest))
        grew = Boolean(reached.add(e.descriptor.digest));
  }
  return orderReferrers(
    pushed,
    entries.filter((e) => reached.has(e.subject)),
  );
}
