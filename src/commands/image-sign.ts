import { readStdinText } from "../core/input-file.ts";
import { resolveSignInputs, SIGN_PASSWORD_INPUT, unreadableArchive } from "../image/sign/options.ts";
import { rewriteFile } from "../image/sign/rewrite.ts";
import { type SignedSubject, type SignResult, signArchive } from "../image/sign/sign-archive.ts";
import { defineAicrCommand } from "./_define.ts";
import { textOrJson, textOrJsonArg } from "./_output.ts";

/** What a subject is beyond its kind: a manifest's platform, the manifest an SBOM or provenance describes. */
const detail = (s: SignedSubject): string => (s.describes ? `of ${s.describes}` : (s.platform ?? ""));

/** One line per subject: status, kind, digest, detail — columns aligned. */
function text(result: SignResult, fingerprint: string): string {
  const status = (s: SignedSubject) => (s.added ? "signed" : "already signed");
  const w1 = Math.max(...result.signed.map((s) => status(s).length));
  const w2 = Math.max(...result.signed.map((s) => s.kind.length));
  const lines = result.signed.map((s) =>
    `${status(s).padEnd(w1)}  ${s.kind.padEnd(w2)}  ${s.digest}  ${detail(s)}`.trimEnd(),
  );
  return [`key ${fingerprint}`, `repository ${result.repository}`, ...lines].join("\n");
}

/** aicr image sign: every input checked → the archive signed in memory → rewritten atomically (only when something was added). */
export default defineAicrCommand({
  name: "sign",
  group: "image",
  announceRun: false,
  examples: [
    "COSIGN_PASSWORD=… aicr image sign dist/aicr-image-0.1.0.tar --key cosign.key",
    'printf %s "$PASSWORD" | aicr image sign aicr.tar --key cosign.key --password-stdin',
    "AICR_SIGNING_KEY=ec-p256.pem aicr image sign aicr.tar -o json",
  ],
  cluster: false,
  transport: "offline",
  args: {
    archive: { type: "positional", description: "The OCI archive (.tar) to sign in place" },
    key: {
      type: "string",
      description:
        "The ECDSA P-256 private key: PEM (EC PRIVATE KEY, PRIVATE KEY) or a cosign key file (cosign.key)",
      valueHint: "path",
      env: "AICR_SIGNING_KEY",
    },
    "password-stdin": {
      type: "boolean",
      description:
        "Read a cosign key file's password from stdin (default: $AICR_SIGNING_KEY_PASSWORD, else $COSIGN_PASSWORD)",
    },
    output: textOrJsonArg("json: what was signed, as JSON on stdout"),
  },
  async run(ctx, flags) {
    const output = textOrJson(flags, "pass -o json for what was signed as JSON, or omit -o");
    const inputs = await resolveSignInputs(
      {
        archive: flags.string("archive"),
        key: flags.string("key"),
        passwordStdin: flags.bool("password-stdin"),
      },
      ctx.env,
      () => readStdinText(SIGN_PASSWORD_INPUT),
    );
    let result: SignResult;
    try {
      result = signArchive(inputs.archive, inputs.key);
    } catch (err) {
      if ((err as Error).name === "ArchiveError") throw unreadableArchive(inputs.archivePath, err);
      throw err;
    }
    if (result.added > 0) await rewriteFile(inputs.archivePath, result.bytes, inputs.archiveStat);
    const present = result.signed.length - result.added;
    ctx.log.info(
      result.added > 0
        ? `signed ${inputs.archivePath}: ${result.added} signatures added${present > 0 ? `, ${present} already there` : ""} (key ${inputs.key.fingerprint})`
        : `${inputs.archivePath} already carries this key's signature on all ${present}; left unchanged`,
    );
    const data = {
      archive: inputs.archivePath,
      repository: result.repository,
      key: inputs.key.fingerprint,
      added: result.added,
      signed: result.signed,
    };
    process.stdout.write(
      output === "json" ? `${JSON.stringify(data, null, 2)}\n` : `${text(result, inputs.key.fingerprint)}\n`,
    );
  },
});
