/**
 * cosign signatures as OCI 1.1 referrers: a manifest with artifactType
 * application/vnd.dev.cosign.artifact.sig.v1+json, subject = the signed manifest, one layer per
 * signature — the simple-signing payload (application/vnd.dev.cosign.simplesigning.v1+json) with the
 * base64 DER signature in its dev.cosignproject.cosign/signature annotation. That layer is what cosign
 * reads (from a referrer with --experimental-oci11, or from the legacy sha256-<hex>.sig tag the push
 * writes), whatever the manifest around it. Built through _referrers.ts, the one builder. Pure.
 */
import type { Referrer } from "../_archive.ts";
import type { Descriptor } from "../_oci.ts";
import { ARTIFACT, type Artifact, buildArtifact, COSIGN_SIGNATURE_ANNOTATION } from "../_referrers.ts";
import { type SigningKey, type VerificationKey, verifySignature } from "./_keys.ts";
import { buildPayload } from "./_payload.ts";

/** One signature as a signature layer carries it. */
export interface SignatureLayer {
  /** The layer's digest (the payload's). */
  digest: string;
  payload: Uint8Array;
  /** The annotation's value: base64 of the DER signature ("" when the layer has none). */
  signature: string;
}

/** The signature referrer of `subject` (a manifest or index descriptor) in `repository`, signed by `key`. */
export function signatureArtifact(subject: Descriptor, repository: string, key: SigningKey): Artifact {
  const payload = buildPayload(repository, subject.digest);
  const signature = Buffer.from(key.sign(payload)).toString("base64");
  return buildArtifact({
    artifactType: ARTIFACT.cosignSignature,
    subject,
    layers: [
      {
        mediaType: ARTIFACT.simpleSigning,
        data: payload,
        annotations: { [COSIGN_SIGNATURE_ANNOTATION]: signature },
      },
    ],
  });
}

/**
 * The simple-signing layers of a signature referrer, with their payload bytes (`blob` gives checked
 * blobs by digest: readOciArchive's, or a registry's). Layers of another media type, and layers
 * whose blob is missing, are left out.
 */
export function signatureLayers(
  referrer: Pick<Referrer, "manifest">,
  blob: (digest: string) => Uint8Array | undefined,
): SignatureLayer[] {
  const layers: SignatureLayer[] = [];
  for (const layer of referrer.manifest.layers ?? []) {
    if (layer.mediaType !== ARTIFACT.simpleSigning) continue;
    const payload = blob(layer.digest);
    if (!payload) continue;
    layers.push({
      digest: layer.digest,
      payload,
      signature: layer.annotations?.[COSIGN_SIGNATURE_ANNOTATION] ?? "",
    });
  }
  return layers;
}

const isSignature = (r: Referrer): boolean =>
  (r.descriptor.artifactType ?? r.manifest.artifactType) === ARTIFACT.cosignSignature;

/**
 * Whether `referrers` (those of one subject) already hold a signature by `key` over exactly
 * `payload`: signing again would add nothing (its bytes may differ — another signer's nonces — but
 * it says the same).
 */
export function alreadySigned(
  referrers: readonly Referrer[],
  blob: (digest: string) => Uint8Array | undefined,
  payload: Uint8Array,
  key: VerificationKey,
): boolean {
  const want = Buffer.from(payload);
  return referrers
    .filter(isSignature)
    .flatMap((r) => signatureLayers(r, blob))
    .some((l) => want.equals(l.payload) && verifySignature(l.payload, l.signature, key));
}
