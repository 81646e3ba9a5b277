/**
 * `aicr image push` flags → checked push inputs, before the first request: the archive reads and
 * verifies, the destination parses, the CA file is a PEM, the password came with the username, and
 * credentials given on the command line will not travel over plain HTTP off this machine. The
 * registry flags' checks are shared with `aicr image verify`.
 */
import { AicrError, invalid } from "../../core/errors.ts";
import { INPUT_LIMITS, readCaFile, readInputBytes } from "../../core/input-file.ts";
import { type OciArchive, readOciArchive } from "../_archive.ts";
import { isLoopback, type PushTarget, parseMountFrom, parsePushTarget } from "./_reference.ts";

export interface PushFlags extends RegistryAccessFlags {
  archive?: string | undefined;
  destination?: string | undefined;
  mountFrom?: string | undefined;
}

export interface PushInputs extends RegistryAccess {
  archivePath: string;
  archive: OciArchive;
  target: PushTarget;
  mountFrom?: string | undefined;
}

const USAGE = "aicr image push <archive> <registry>/<repository>[:<tag>]";

const ARCHIVE_INPUT = {
  flag: "archive",
  what: "an OCI image archive",
  maxBytes: INPUT_LIMITS.archive,
  remedy:
    "pass the path of an OCI archive (a .tar written by npm run image, aicr image save or skopeo copy oci-archive:…)",
};

const CA_INPUT = {
  flag: "--ca-file",
  what: "a PEM CA certificate",
  maxBytes: INPUT_LIMITS.pem,
  remedy: "pass a readable PEM file with the CA certificate that issued the registry's certificate",
};

/** The commands that talk to a registry, for their remedies. */
export type RegistryVerb = "push" | "verify";

/** The password on stdin (--password-stdin): at most 64 KiB of UTF-8. */
export const passwordInput = (verb: RegistryVerb) => ({
  flag: "--password-stdin",
  what: "a password",
  maxBytes: INPUT_LIMITS.password,
  remedy: `pipe the password alone: printf %s "$PASSWORD" | aicr image ${verb} … --password-stdin`,
});
export const PASSWORD_INPUT = passwordInput("push");

const LOCAL_REGISTRY: Record<RegistryVerb, string> = {
  push: "push to a registry on this machine",
  verify: "verify against a registry on this machine",
};

function readArchive(path: string): OciArchive {
  const bytes = readInputBytes(path, ARCHIVE_INPUT);
  try {
    return readOciArchive(bytes);
  } catch (err) {
    throw invalid(
      `The archive ${JSON.stringify(path)} is not a valid OCI archive: ${(err as Error).message}`,
      {
        remedy: "rebuild it (npm run image, aicr image save), or check the file was copied completely",
        context: { field: "archive", value: path },
      },
    );
  }
}

/** The password as piped in: one trailing newline (echo, a here-string) is not part of it. */
export function trimPassword(text: string): string {
  return text.replace(/\r?\n$/, "");
}

export async function resolvePushInputs(f: PushFlags, readStdin: () => Promise<string>): Promise<PushInputs> {
  if (!f.archive || !f.destination) {
    throw invalid(`Missing ${f.archive ? "the destination" : "the archive"}: expected ${USAGE}`, {
      remedy: `run "${USAGE}", e.g. aicr image push aicr-oci.tar registry.example.com/team/aicr:v1`,
    });
  }
  const target = parsePushTarget(f.destination);
  const mountFrom = f.mountFrom !== undefined ? parseMountFrom(f.mountFrom, target) : undefined;
  checkRegistryFlags(f, target, "push");
  const access = await readRegistryAccess(f, readStdin);
  // the largest read last: every cheaper refusal comes first
  const archive = readArchive(f.archive);
  return { archivePath: f.archive, archive, target, ...access, mountFrom };
}

/** The flags every command that talks to a registry takes (image push, image verify). */
export interface RegistryAccessFlags {
  username?: string | undefined;
  passwordStdin?: boolean | undefined;
  caFile?: string | undefined;
  plainHttp?: boolean | undefined;
}

/** What those flags give once read: the password from stdin, the CA file's PEM text. */
export interface RegistryAccess {
  username?: string | undefined;
  password?: string | undefined;
  ca?: string | undefined;
  plainHttp: boolean;
}

/**
 * The registry flags checked against each other and the registry, reading nothing: the password
 * comes with a user, TLS options are not mixed with plain HTTP, and a password never travels over
 * plain HTTP off this machine. `verb` names the command in the remedies.
 */
export function checkRegistryFlags(
  f: RegistryAccessFlags,
  target: { registry: string; apiHost: string },
  verb: RegistryVerb,
): void {
  if (f.passwordStdin && f.username === undefined) {
    throw invalid("--password-stdin needs --username", {
      remedy: "pass --username <user> with --password-stdin",
    });
  }
  if (f.username !== undefined && !f.passwordStdin) {
    throw invalid(`--username ${JSON.stringify(f.username)} needs --password-stdin`, {
      remedy: `pipe the password in: printf %s "$PASSWORD" | aicr image ${verb} … --username <user> --password-stdin`,
    });
  }
  if (f.username === "")
    throw invalid('Invalid --username "": expected a user name', { remedy: "pass the registry user name" });
  if (f.plainHttp && f.caFile) {
    throw invalid("--ca-file and --plain-http contradict each other", {
      remedy: "drop --plain-http to use HTTPS with that CA, or drop --ca-file for a plain-HTTP registry",
    });
  }
  if (f.plainHttp && f.username !== undefined && !isLoopback(target.apiHost)) {
    throw new AicrError(
      "INVALID_REQUEST",
      `Refusing to send the password for ${JSON.stringify(target.registry)} over plain HTTP`,
      {
        remedy: `serve the registry over HTTPS (drop --plain-http; --ca-file trusts a private CA), or ${LOCAL_REGISTRY[verb]}`,
        context: { registry: target.registry },
      },
    );
  }
}

/** The CA file (a PEM bundle, through the bounded reader) and the password from stdin, once checked. */
export async function readRegistryAccess(
  f: RegistryAccessFlags,
  readStdin: () => Promise<string>,
): Promise<RegistryAccess> {
  const ca = f.caFile !== undefined ? readCaFile(f.caFile, CA_INPUT) : undefined;
  let password: string | undefined;
  if (f.passwordStdin) {
    password = trimPassword(await readStdin());
    if (!password)
      throw invalid("--password-stdin read an empty password", {
        remedy: "pipe the password into aicr on stdin",
      });
  }
  return { username: f.username, password, ca, plainHttp: Boolean(f.plainHttp) };
}
