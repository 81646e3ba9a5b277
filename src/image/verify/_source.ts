/**
 * Where `aicr image verify` reads an image from — an archive (readOciArchive has checked every
 * digest already) or a registry (each read hashed as it arrives) — behind one interface, so the
 * checks are the same for both. Every read is checked against the digest that names it; content that
 * fails is a ContentError whose message is the reason the report gives.
 */
import type { Descriptor, Index, Manifest } from "../_oci.ts";
import { ContentError } from "../registry/_pull.ts";

export interface VerifySource {
  /** The manifest or index the operator named (the archive's tagged root, the registry's tag or digest). */
  root(): Promise<Descriptor>;
  /** A manifest's or index's bytes, checked. `what` names it in a failure ("platform manifest"). */
  manifest(d: Descriptor, what: string): Promise<Uint8Array>;
  /** A small blob's bytes, checked (a signature payload, an SBOM, a provenance statement). */
  blob(d: Descriptor, what: string): Promise<Uint8Array>;
  /** Every config and layer of an image manifest read and hashed; the first that fails throws. */
  contents(config: Descriptor, layers: readonly Descriptor[]): Promise<void>;
  /** The referrers of a manifest or index, as listed (artifactType, annotations). */
  referrers(digest: string): Promise<Descriptor[]>;
  /** cosign's legacy signature manifest of `digest` (its `sha256-<hex>.sig` tag), where tags exist. */
  legacySignatures(digest: string): Promise<Uint8Array | undefined>;
}

/** The bytes of small documents read whole (payloads, SBOMs, statements) are capped at this. */
export const MAX_DOCUMENT_BYTES = 32 * 1024 * 1024;

/** JSON of content already checked against its digest; not JSON is a ContentError naming it. */
export function parseJson<T>(bytes: Uint8Array, what: string, digest: string): T {
  try {
    return JSON.parse(new TextDecoder().decode(bytes)) as T;
  } catch {
    throw new ContentError(`${what} ${digest} is not valid JSON`);
  }
}

/** An image manifest: a config and a list of layers, each a descriptor. */
export function parseManifest(bytes: Uint8Array, digest: string, what = "manifest"): Manifest {
  const m = parseJson<Partial<Manifest> | null>(bytes, what, digest);
  const isDescriptor = (d: unknown): boolean => typeof (d as Descriptor | undefined)?.digest === "string";
  if (!m || !isDescriptor(m.config) || !Array.isArray(m.layers) || !m.layers.every(isDescriptor))
    throw new ContentError(`${what} ${digest} is not an image manifest (no config and layers)`);
  return m as Manifest;
}

/** An image index: a list of descriptors. */
export function parseIndex(bytes: Uint8Array, digest: string): Index {
  const index = parseJson<Partial<Index> | null>(bytes, "index", digest);
  if (!index || !Array.isArray(index.manifests))
    throw new ContentError(`index ${digest} is not an image index (no manifests)`);
  return index as Index;
}

/** A read's value, or the reason its content failed; any other error (an unreachable registry) goes on. */
export async function content<T>(fn: () => Promise<T>): Promise<{ value: T } | { reason: string }> {
  try {
    return { value: await fn() };
  } catch (err) {
    if (err instanceof ContentError) return { reason: err.message };
    throw err;
  }
}
