import { readStdinText } from "../core/input-file.ts";
import { resolveCredentials } from "../image/registry/credentials.ts";
import { passwordInput } from "../image/registry/options.ts";
import { resolveVerifyInputs } from "../image/verify/options.ts";
import { renderText, verificationFailed } from "../image/verify/report.ts";
import { verifyImage } from "../image/verify/verify.ts";
import { defineAicrCommand } from "./_define.ts";
import { textOrJson, textOrJsonArg } from "./_output.ts";
import { registryArgs } from "./_registry-flags.ts";

/**
 * aicr image verify: every input checked → the image read (archive or registry) → the report on
 * stdout (also when a check fails) → UNAUTHORIZED (exit 4) unless every check passed.
 */
export default defineAicrCommand({
  name: "verify",
  group: "image",
  announceRun: false,
  examples: [
    "aicr image verify aicr-image-0.1.0.tar --key aicr.pub",
    "aicr image verify registry.example.com/aicr/aicr:v0.1.0 --key aicr.pub --ca-file ca.pem -o json",
    "aicr image verify localhost:5000/aicr@sha256:<digest> --key aicr.pub --plain-http",
  ],
  cluster: false,
  transport: "offline",
  args: {
    image: {
      type: "positional",
      description: "The image: an OCI archive (.tar), or <registry>/<repository>:<tag> or …@sha256:<digest>",
    },
    key: {
      type: "string",
      description: "The P-256 public key (PEM) the image must be signed with",
      valueHint: "file",
    },
    output: textOrJsonArg("Output format: text (one line per check, default) or json (the report)"),
    ...registryArgs,
  },
  async run(ctx, flags) {
    const output = textOrJson(flags, "pass -o json for the report as JSON, or omit -o");
    const inputs = await resolveVerifyInputs(
      {
        image: flags.string("image"),
        key: flags.string("key"),
        username: flags.string("username"),
        passwordStdin: flags.bool("password-stdin"),
        caFile: flags.string("ca-file"),
        plainHttp: flags.bool("plain-http"),
      },
      () => readStdinText(passwordInput("verify")),
    );
    const credentials =
      inputs.target.kind === "registry"
        ? await resolveCredentials({
            registry: inputs.target.ref.registry,
            username: inputs.target.access.username,
            password: inputs.target.access.password,
            env: ctx.env,
            signal: ctx.signal,
            log: ctx.log,
          })
        : undefined;
    const report = await verifyImage({ inputs, credentials, signal: ctx.signal, log: ctx.log });
    process.stdout.write(output === "json" ? `${JSON.stringify(report, null, 2)}\n` : renderText(report));
    if (!report.ok) throw verificationFailed(report);
  },
});
