import { readStdinText } from "../core/input-file.ts";
import { resolveCredentials } from "../image/registry/credentials.ts";
import { PASSWORD_INPUT, resolvePushInputs } from "../image/registry/options.ts";
import { formatSize, pushArchive } from "../image/registry/push.ts";
import { defineAicrCommand } from "./_define.ts";
import { registryArgs } from "./_registry-flags.ts";

/** aicr image push: check every input → credentials → push over the OCI distribution API → print the digest. */
export default defineAicrCommand({
  name: "push",
  group: "image",
  announceRun: false,
  examples: [
    "aicr image save -o aicr.tar && aicr image push aicr.tar registry.example.com/aicr/aicr",
    "aicr image push aicr.tar registry.example.com/aicr/aicr:v0.1.0 --ca-file ca.pem",
    'printf %s "$TOKEN" | aicr image push aicr.tar ghcr.io/me/aicr --username me --password-stdin',
  ],
  cluster: false,
  transport: "offline",
  args: {
    archive: { type: "positional", description: "The OCI archive (.tar) to push" },
    destination: {
      type: "positional",
      description: "<registry>/<repository>[:<tag>] (tag default: the archive's ref.name)",
    },
    ...registryArgs,
    "mount-from": {
      type: "string",
      description: "Mount blobs from this repository on the same registry instead of uploading them",
      valueHint: "repository",
    },
  },
  async run(ctx, flags) {
    const inputs = await resolvePushInputs(
      {
        archive: flags.string("archive"),
        destination: flags.string("destination"),
        username: flags.string("username"),
        passwordStdin: flags.bool("password-stdin"),
        caFile: flags.string("ca-file"),
        plainHttp: flags.bool("plain-http"),
        mountFrom: flags.string("mount-from"),
      },
      () => readStdinText(PASSWORD_INPUT),
    );
    const credentials = await resolveCredentials({
      registry: inputs.target.registry,
      username: inputs.username,
      password: inputs.password,
      env: ctx.env,
      signal: ctx.signal,
      log: ctx.log,
    });
    const result = await pushArchive({ ...inputs, credentials, signal: ctx.signal, log: ctx.log });
    const { uploaded, mounted, skipped, referrers } = result;
    const attached = referrers.count
      ? `; ${referrers.count} referrer${referrers.count === 1 ? "" : "s"} (${referrers.via === "api" ? "referrers API" : "tag scheme"})`
      : "";
    ctx.log.info(
      `Pushed ${inputs.target.registry}/${inputs.target.repository}:${result.tag}: uploaded ${uploaded.blobs} blobs (${formatSize(uploaded.bytes)}), mounted ${mounted.blobs}, skipped ${skipped.blobs} already present (${formatSize(skipped.bytes)})${attached}`,
    );
    process.stdout.write(`${result.reference}\n`);
  },
});
