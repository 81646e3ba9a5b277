/**
 * The SBOM and provenance of one platform image, as the plain files `npm run image` writes beside
 * the archive and as the OCI 1.1 referrers (subject: the platform manifest) the layout carries —
 * the same bytes either way. `npm run image` and `aicr image save` both call this. Pure.
 */
import type { ImageInfo } from "../_aicr-image.ts";
import type { BuiltImage } from "../_layout.ts";
import {
  ARTIFACT,
  type Artifact,
  buildArtifact,
  PREDICATE_TYPE_ANNOTATION,
  TITLE_ANNOTATION,
} from "../_referrers.ts";
import { imageProvenance, SLSA_PROVENANCE } from "./_provenance.ts";
import { attestationBytes, imageSbom } from "./_spdx.ts";

export interface Attestation {
  /** The file name: aicr-image-<version>.linux-<arch>.{spdx,provenance}.json. */
  name: string;
  data: Uint8Array;
  /** The referrer manifest that carries `data` as its one layer. */
  artifact: Artifact;
}

export const imageFileBase = (info: ImageInfo): string => `aicr-image-${info.version}.linux-${info.arch}`;

/** The SBOM, then the provenance, of `image` (built from `info` with a binary of this sha256, hex). */
export function imageAttestations(info: ImageInfo, image: BuiltImage, binarySha256: string): Attestation[] {
  const digest = image.descriptor.digest;
  const base = imageFileBase(info);
  const sbom = { name: `${base}.spdx.json`, data: attestationBytes(imageSbom(info, digest, binarySha256)) };
  const provenance = {
    name: `${base}.provenance.json`,
    data: attestationBytes(imageProvenance(info, digest, binarySha256)),
  };
  return [
    {
      ...sbom,
      artifact: buildArtifact({
        artifactType: ARTIFACT.spdx,
        subject: image.descriptor,
        layers: [
          { mediaType: ARTIFACT.spdx, data: sbom.data, annotations: { [TITLE_ANNOTATION]: sbom.name } },
        ],
      }),
    },
    {
      ...provenance,
      artifact: buildArtifact({
        artifactType: ARTIFACT.intoto,
        subject: image.descriptor,
        layers: [
          {
            mediaType: ARTIFACT.intoto,
            data: provenance.data,
            annotations: { [TITLE_ANNOTATION]: provenance.name },
          },
        ],
        annotations: { [PREDICATE_TYPE_ANNOTATION]: SLSA_PROVENANCE },
      }),
    },
  ];
}
