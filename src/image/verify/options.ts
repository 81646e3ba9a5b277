/**
 * `aicr image verify` flags → checked inputs, before the first request: the image is an archive (a
 * path that exists) or a registry reference (by tag or digest); the key is a P-256 public key; the
 * registry flags are checked as push checks them (and refused for an archive); the archive is read
 * last. An archive whose content fails its digests is not refused here: that is the verdict.
 */
import { statSync } from "node:fs";
import { AicrError, invalid } from "../../core/errors.ts";
import { INPUT_LIMITS, readInputBytes, readInputText } from "../../core/input-file.ts";
import { ArchiveError, type OciArchive, readOciArchive } from "../_archive.ts";
import type { Descriptor, Index } from "../_oci.ts";
import { readTar } from "../_tar.ts";
import { type ImageReference, parseImageReference } from "../registry/_reference.ts";
import {
  checkRegistryFlags,
  type RegistryAccess,
  type RegistryAccessFlags,
  readRegistryAccess,
} from "../registry/options.ts";
import { loadVerificationKey, type VerificationKey } from "../sign/_keys.ts";

export interface VerifyFlags extends RegistryAccessFlags {
  image?: string | undefined;
  key?: string | undefined;
}

export type VerifyTarget =
  | { kind: "archive"; path: string; archive: OciArchive; root: Descriptor }
  /** An archive whose content does not match its digests: `reason` is readOciArchive's. */
  | { kind: "broken-archive"; path: string; root: Descriptor; reason: string }
  | { kind: "registry"; ref: ImageReference; access: RegistryAccess };

export interface VerifyInputs {
  target: VerifyTarget;
  key: VerificationKey;
}

const USAGE =
  "aicr image verify <registry>/<repository>:<tag>|<registry>/<repository>@<digest>|<archive.tar> --key <key.pub>";

const KEY_INPUT = {
  flag: "--key",
  what: "a PEM public key",
  maxBytes: INPUT_LIMITS.pem,
  remedy:
    "pass the publisher's P-256 public key in PEM form (openssl ec -in key.pem -pubout -out key.pub, or cosign public-key)",
};

const ARCHIVE_INPUT = {
  flag: "image",
  what: "an OCI image archive",
  maxBytes: INPUT_LIMITS.archive,
  remedy:
    "pass the path of an OCI archive (a .tar written by npm run image or aicr image save), or a registry reference",
};

const exists = (path: string): boolean => {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
};

/** An ArchiveError that says the content is not what its digests name (vs. not an OCI archive at all). */
function reference(value: string): ImageReference {
  let ref: ImageReference;
  try {
    ref = parseImageReference(value);
  } catch (err) {
    if (!(err instanceof AicrError)) throw err;
    throw new AicrError(err.code, `${err.message} (and no file has that name)`, {
      remedy: `${err.remedy}; or pass the path of an OCI archive`,
      context: err.context,
    });
  }
  if (!ref.tag && !ref.digest)
    throw invalid(`Invalid image reference ${JSON.stringify(value)}: it names no tag or digest`, {
      remedy: `end it with :<tag> or @sha256:<digest>, e.g. ${value}:v1`,
      context: { field: "image", value },
    });
  return ref;
}

/** The tagged root index.json names (the first entry with a ref.name, else the first), for a report. */
function namedRoot(bytes: Uint8Array): Descriptor | undefined {
  const file = readTar(bytes).find((e) => e.type === "file" && e.path.replace(/^\.\//, "") === "index.json");
  if (file?.type !== "file") return undefined;
  try {
    const entries = (JSON.parse(new TextDecoder().decode(file.data)) as Index).manifests ?? [];
    return entries.find((d) => d.annotations?.["org.opencontainers.image.ref.name"]) ?? entries[0];
  } catch {
    return undefined;
  }
}

function archiveTarget(path: string): VerifyTarget {
  const bytes = readInputBytes(path, ARCHIVE_INPUT);
  let archive: OciArchive;
  try {
    archive = readOciArchive(bytes);
  } catch (err) {
    const message = (err as Error).message;
    const root = err instanceof ArchiveError && err.kind === "integrity" ? namedRoot(bytes) : undefined;
    if (root) return { kind: "broken-archive", path, root, reason: message };
    throw invalid(`The archive ${JSON.stringify(path)} is not a valid OCI archive: ${message}`, {
      remedy: "verify an archive written by npm run image or aicr image save, copied completely",
      context: { field: "image", value: path },
    });
  }
  if (archive.roots.length !== 1)
    throw invalid(
      `The archive ${JSON.stringify(path)} holds ${archive.roots.length} images; aicr image verify checks one`,
      {
        remedy:
          "verify an archive written by npm run image or aicr image save (one image, its referrers beside it)",
        context: { field: "image", value: path },
      },
    );
  return { kind: "archive", path, archive, root: archive.roots[0]! };
}

export async function resolveVerifyInputs(
  f: VerifyFlags,
  readStdin: () => Promise<string>,
): Promise<VerifyInputs> {
  if (!f.image) throw invalid(`Missing the image: expected ${USAGE}`, { remedy: `run "${USAGE}"` });
  if (!f.key)
    throw invalid("Missing --key: the public key the image must be signed with", {
      remedy: `run "${USAGE}" with the publisher's P-256 public key (PEM)`,
    });
  const isArchive = exists(f.image);
  const ref = isArchive ? undefined : reference(f.image);
  if (ref) checkRegistryFlags(f, ref, "verify");
  else {
    const given = [
      f.username !== undefined && "--username",
      f.passwordStdin && "--password-stdin",
      f.caFile !== undefined && "--ca-file",
      f.plainHttp && "--plain-http",
    ].filter((x): x is string => typeof x === "string");
    if (given.length > 0)
      throw invalid(
        `${given.join(", ")}: for a registry reference, and ${JSON.stringify(f.image)} is a file`,
        {
          remedy: `drop ${given.join(" and ")} to verify the archive, or name the image in its registry (<registry>/<repository>:<tag>)`,
          context: { field: given[0], value: f.image },
        },
      );
  }
  const key = loadVerificationKey(readInputText(f.key, KEY_INPUT), { flag: "--key", path: f.key });
  if (ref) return { target: { kind: "registry", ref, access: await readRegistryAccess(f, readStdin) }, key };
  // the largest read last: every cheaper refusal comes first
  return { target: archiveTarget(f.image), key };
}
