/**
 * `aicr image push` flags → checked push inputs, before the first request: the archive reads and
 * verifies, the destination parses, the CA file is a PEM, the password came with the username, and
 * credentials given on the command line will not travel over plain HTTP off this machine.
 */
import { readFile } from "node:fs/promises";
import { AicrError, invalid } from "../../core/errors.ts";
import { type OciArchive, readOciArchive } from "../_archive.ts";
import { isLoopback, type PushTarget, parseMountFrom, parsePushTarget } from "./_reference.ts";

export interface PushFlags {
  archive?: string | undefined;
  destination?: string | undefined;
  username?: string | undefined;
  passwordStdin?: boolean | undefined;
  caFile?: string | undefined;
  plainHttp?: boolean | undefined;
  mountFrom?: string | undefined;
}

export interface PushInputs {
  archivePath: string;
  archive: OciArchive;
  target: PushTarget;
  username?: string | undefined;
  password?: string | undefined;
  ca?: string | undefined;
  plainHttp: boolean;
  mountFrom?: string | undefined;
}

const USAGE = "aicr image push <archive> <registry>/<repository>[:<tag>]";

async function readArchive(path: string): Promise<OciArchive> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(path));
  } catch (err) {
    throw invalid(
      `Cannot read the archive ${JSON.stringify(path)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      {
        remedy:
          "pass the path of an OCI archive (a .tar written by aicr image build or skopeo copy oci-archive:…)",
        context: { field: "archive", value: path },
      },
    );
  }
  try {
    return readOciArchive(bytes);
  } catch (err) {
    throw invalid(
      `The archive ${JSON.stringify(path)} is not a valid OCI archive: ${(err as Error).message}`,
      {
        remedy: "rebuild it (aicr image build), or check the file was copied completely",
        context: { field: "archive", value: path },
      },
    );
  }
}

async function readCa(path: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw invalid(
      `Cannot read --ca-file ${JSON.stringify(path)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      {
        remedy: "pass a readable PEM file with the CA certificate that issued the registry's certificate",
        context: { field: "--ca-file", value: path },
      },
    );
  }
  if (!text.includes("-----BEGIN CERTIFICATE-----")) {
    throw invalid(`--ca-file ${JSON.stringify(path)} holds no PEM certificate`, {
      remedy: "pass the CA certificate in PEM form (-----BEGIN CERTIFICATE-----)",
      context: { field: "--ca-file", value: path },
    });
  }
  return text;
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
  if (f.passwordStdin && f.username === undefined) {
    throw invalid("--password-stdin needs --username", {
      remedy: "pass --username <user> with --password-stdin",
    });
  }
  if (f.username !== undefined && !f.passwordStdin) {
    throw invalid(`--username ${JSON.stringify(f.username)} needs --password-stdin`, {
      remedy:
        'pipe the password in: printf %s "$PASSWORD" | aicr image push … --username <user> --password-stdin',
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
        remedy:
          "serve the registry over HTTPS (drop --plain-http; --ca-file trusts a private CA), or push to a registry on this machine",
        context: { registry: target.registry },
      },
    );
  }
  const ca = f.caFile !== undefined ? await readCa(f.caFile) : undefined;
  const archive = await readArchive(f.archive);
  let password: string | undefined;
  if (f.passwordStdin) {
    password = trimPassword(await readStdin());
    if (!password)
      throw invalid("--password-stdin read an empty password", {
        remedy: "pipe the password into aicr on stdin",
      });
  }
  return {
    archivePath: f.archive,
    archive,
    target,
    username: f.username,
    password,
    ca,
    plainHttp: Boolean(f.plainHttp),
    mountFrom,
  };
}
