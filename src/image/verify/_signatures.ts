/**
 * Whether a manifest or index carries a cosign signature by the key: a signature referrer of that
 * digest (or cosign's legacy `.sig` tag, where the source has tags) holding a simple-signing layer
 * whose signature verifies with the key over its payload, and whose payload names that exact digest.
 * The signature is checked before the payload is read; a payload's docker-reference is not (an image
 * copied into another registry keeps its signatures).
 */
import type { Manifest } from "../_oci.ts";
import { ARTIFACT } from "../_referrers.ts";

import { cosignSignatureTag } from "../registry/_referrer-tags.ts";
import { type VerificationKey, verifySignature } from "../sign/_keys.ts";
import { parsePayload } from "../sign/_payload.ts";
import { signatureLayers } from "../sign/_signature.ts";
import { content, parseManifest, type VerifySource } from "./_source.ts";

export type SignatureVerdict =
  /** `by`: the signature manifest that holds it (its digest, or the legacy tag). */
  { ok: true; by: string } | { ok: false; reason: string };

const WHAT = "signature manifest";

/** A signature manifest: where it came from, and its manifest (subject checked by the caller). */
interface Candidate {
  by: string;
  manifest: Manifest;
}

async function candidates(source: VerifySource, digest: string, problems: string[]): Promise<Candidate[]> {
  const out: Candidate[] = [];
  for (const d of await source.referrers(digest)) {
    if (d.artifactType !== undefined && d.artifactType !== ARTIFACT.cosignSignature) continue;
    const read = await content(async () => parseManifest(await source.manifest(d, WHAT), d.digest, WHAT));
    if ("reason" in read) {
      problems.push(read.reason);
      continue;
    }
    const manifest = read.value;
    if (manifest.artifactType !== ARTIFACT.cosignSignature) continue;
    if (manifest.subject?.digest !== digest) {
      problems.push(
        `signature manifest ${d.digest} is listed for ${digest} but describes ${manifest.subject?.digest ?? "nothing"}`,
      );
      continue;
    }
    out.push({ by: d.digest, manifest });
  }
  const legacy = await source.legacySignatures(digest);
  if (legacy) {
    const tag = cosignSignatureTag(digest);
    const read = await content(async () => parseManifest(legacy, `tag ${tag}`, WHAT));
    if ("reason" in read) problems.push(read.reason);
    else out.push({ by: `tag ${tag}`, manifest: read.value });
  }
  return out;
}

/** The verdict on `digest`'s signature by `key`; the reason names the digest and what failed. */
export async function checkSignature(
  source: VerifySource,
  key: VerificationKey,
  digest: string,
): Promise<SignatureVerdict> {
  const problems: string[] = [];
  /** Distinct signatures (the referrer and the legacy tag may carry the same one). */
  const seen = new Set<string>();
  let signsOther: string | undefined;
  for (const c of await candidates(source, digest, problems)) {
    // the payloads, read (and checked) first: signatureLayers looks them up by digest
    const payloads = new Map<string, Uint8Array>();
    for (const layer of c.manifest.layers) {
      if (layer.mediaType !== ARTIFACT.simpleSigning) continue;
      const read = await content(() => source.blob(layer, "signature payload"));
      if ("reason" in read) problems.push(read.reason);
      else payloads.set(layer.digest, read.value);
    }
    for (const layer of signatureLayers(c, (d) => payloads.get(d))) {
      if (!layer.signature || seen.has(`${layer.digest} ${layer.signature}`)) continue;
      seen.add(`${layer.digest} ${layer.signature}`);
      if (!verifySignature(layer.payload, layer.signature, key)) continue;
      const reading = parsePayload(layer.payload);
      if (!reading.ok) {
        problems.push(`the payload ${layer.digest} signed by this key is unreadable: ${reading.reason}`);
        continue;
      }
      if (reading.claim.digest === digest) return { ok: true, by: c.by };
      signsOther = reading.claim.digest;
    }
  }
  const detail = signsOther
    ? `the signature by this key there signs ${signsOther}`
    : problems.length > 0
      ? problems[0]
      : seen.size === 0
        ? "it has no signature"
        : seen.size === 1
          ? "one signature, by another key"
          : `${seen.size} signatures, none by this key`;
  return { ok: false, reason: `no signature by this key for ${digest} (${detail})` };
}
