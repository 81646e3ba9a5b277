/**
 * `aicr image sign` flags → checked inputs, before anything is written: the archive (a regular file,
 * never a symlink — it is rewritten in place — read through the one bounded reader), the key (--key,
 * else $AICR_SIGNING_KEY; a P-256 PEM or cosign key file) and, for a cosign key file, its password
 * (--password-stdin, else $AICR_SIGNING_KEY_PASSWORD, else $COSIGN_PASSWORD).
 */
import { lstatSync, type Stats } from "node:fs";
import { type AicrError, invalid } from "../../core/errors.ts";
import { fileKind, INPUT_LIMITS, inputError, readInputBytes, readInputText } from "../../core/input-file.ts";
import { trimPassword } from "../registry/options.ts";
import { COSIGN_KEY_LABELS, loadSigningKey, pemBlocks, type SigningKey } from "./_keys.ts";

export interface SignFlags {
  archive?: string | undefined;
  key?: string | undefined;
  passwordStdin?: boolean | undefined;
}

export interface SignInputs {
  archivePath: string;
  archive: Uint8Array;
  /** The archive as it was when read: the rewrite refuses a file changed since. */
  archiveStat: Stats;
  key: SigningKey;
  /** Where the key came from: --key, or $AICR_SIGNING_KEY. */
  keyFrom: string;
}

type Env = Readonly<Record<string, string | undefined>>;

const USAGE = "aicr image sign <archive> --key <key.pem>";

export const ARCHIVE_INPUT = {
  flag: "archive",
  what: "an OCI image archive",
  maxBytes: INPUT_LIMITS.archive,
  remedy: "pass the path of the OCI archive to sign (a .tar written by npm run image or aicr image save)",
};

/** --password-stdin of image sign: at most 64 KiB of UTF-8. */
export const SIGN_PASSWORD_INPUT = {
  flag: "--password-stdin",
  what: "a password",
  maxBytes: INPUT_LIMITS.password,
  remedy: 'pipe the key\'s password alone: printf %s "$PASSWORD" | aicr image sign … --password-stdin',
};

/** The archive is rewritten in place: a symlink (it could point anywhere) or a special file is refused. */
export function archiveStatOf(path: string): Stats {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch {
    // the reader names the problem (no such file, permission denied, …)
    readInputBytes(path, ARCHIVE_INPUT);
    throw inputError(ARCHIVE_INPUT, path, "cannot be inspected");
  }
  if (st.isSymbolicLink())
    throw inputError(
      ARCHIVE_INPUT,
      path,
      "a symlink; aicr image sign rewrites the archive and never writes through a link",
    );
  if (!st.isFile()) throw inputError(ARCHIVE_INPUT, path, `${fileKind(st.mode)}, not a regular file`);
  return st;
}

export async function resolveSignInputs(
  f: SignFlags,
  env: Env,
  readStdin: () => Promise<string>,
): Promise<SignInputs> {
  if (!f.archive)
    throw invalid(`Missing the archive: expected ${USAGE}`, {
      remedy: `run "${USAGE}", e.g. aicr image sign dist/aicr-image-0.1.0.tar --key cosign.key`,
      context: { field: "archive" },
    });
  const keyFrom = f.key ? "--key" : "AICR_SIGNING_KEY";
  const keyPath = f.key || env.AICR_SIGNING_KEY;
  if (!keyPath)
    throw invalid("Missing the signing key: pass --key <key.pem> or set AICR_SIGNING_KEY", {
      remedy:
        "pass a PEM ECDSA P-256 private key or a cosign key file (cosign generate-key-pair writes cosign.key)",
      context: { field: "--key" },
    });
  // The key first: it is small, and a wrong key or password should not wait for a large archive's read.
  const key = await readSigningKey({
    path: keyPath,
    flag: keyFrom,
    passwordStdin: f.passwordStdin,
    env,
    readStdin,
  });

  const archiveStat = archiveStatOf(f.archive);
  const archive = readInputBytes(f.archive, ARCHIVE_INPUT);
  return { archivePath: f.archive, archive, archiveStat, key, keyFrom };
}

export interface KeyFileOptions {
  path: string;
  /** How messages name it: --key, AICR_SIGNING_KEY. */
  flag: string;
  /** Read a cosign key file's password with `readStdin` (else from env). */
  passwordStdin?: boolean | undefined;
  env: Env;
  readStdin?: () => Promise<string>;
}

/**
 * A signing key from a file (the bounded reader, 1 MiB): PEM P-256, or cosign's key file opened with
 * the password from stdin (when asked), else $AICR_SIGNING_KEY_PASSWORD, else $COSIGN_PASSWORD.
 * npm run image reads its --key / AICR_SIGNING_KEY through this too.
 */
export async function readSigningKey(o: KeyFileOptions): Promise<SigningKey> {
  const keyText = readInputText(o.path, {
    flag: o.flag,
    what: "a PEM private key",
    maxBytes: INPUT_LIMITS.pem,
    remedy: "pass a PEM ECDSA P-256 private key or a cosign key file (cosign.key)",
  });
  const blocks = pemBlocks(keyText);
  const encrypted = Array.isArray(blocks) && blocks.some((b) => COSIGN_KEY_LABELS.includes(b.label));
  if (o.passwordStdin && !encrypted)
    throw invalid(
      `--password-stdin was given, but ${o.flag} ${JSON.stringify(o.path)} is not an encrypted key`,
      {
        remedy:
          "leave out --password-stdin for an unencrypted PEM key (or pass the cosign key file it is for)",
        context: { field: "--password-stdin" },
      },
    );
  let password: string | undefined;
  if (o.passwordStdin && o.readStdin) password = trimPassword(await o.readStdin());
  else if (encrypted) password = o.env.AICR_SIGNING_KEY_PASSWORD ?? o.env.COSIGN_PASSWORD;
  return loadSigningKey(keyText, { flag: o.flag, path: o.path }, { password });
}

/** An archive that does not read as an OCI layout: INVALID_REQUEST naming it (as image push does). */
export function unreadableArchive(path: string, err: unknown): AicrError {
  return invalid(
    `The archive ${JSON.stringify(path)} is not a valid OCI archive: ${(err as Error).message}`,
    {
      remedy: "rebuild it (npm run image, aicr image save), or check the file was copied completely",
      context: { field: "archive", value: path },
    },
  );
}
