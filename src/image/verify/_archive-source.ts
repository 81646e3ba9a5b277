/**
 * An OCI archive as a verify source. readOciArchive has read every manifest, config and layer it
 * reaches — the image's and each referrer's — and checked their digests and sizes, so reads here
 * are lookups; a blob it does not hold is missing from the archive.
 */
import type { OciArchive } from "../_archive.ts";
import type { Descriptor } from "../_oci.ts";
import { ContentError } from "../registry/_pull.ts";
import type { VerifySource } from "./_source.ts";

export function archiveSource(archive: OciArchive, root: Descriptor): VerifySource {
  const read = (d: Descriptor, what: string): Uint8Array => {
    const bytes = archive.blob(d.digest);
    if (!bytes) throw new ContentError(`${what} ${d.digest} is missing from the archive`);
    return bytes;
  };
  return {
    root: async () => root,
    manifest: async (d, what) => read(d, what),
    blob: async (d, what) => read(d, what),
    contents: async (config, layers) => {
      read(config, "config");
      for (const l of layers) read(l, "layer");
    },
    referrers: async (digest) => archive.referrersOf(digest).map((r) => r.descriptor),
    legacySignatures: async () => undefined,
  };
}
