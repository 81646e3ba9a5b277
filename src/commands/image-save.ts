import { AicrError } from "../core/errors.ts";
import { checkFileDestination } from "../core/files.ts";
import { IMAGE_REPOSITORY, REVISION, releaseTag, VERSION } from "../core/version.ts";
import { saveImage } from "../image/save.ts";
import { defineAicrCommand } from "./_define.ts";

const mib = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MiB`;

/**
 * aicr image save -o <archive>: this binary as a one-platform image archive with its SBOM and
 * provenance, no network, no engine.
 */
export default defineAicrCommand({
  name: "save",
  group: "image",
  announceRun: false,
  cluster: false,
  transport: "offline",
  args: {
    output: {
      type: "string",
      alias: "o",
      required: true,
      description: "The archive to write (must not exist)",
      valueHint: "file.tar",
    },
  },
  async run(ctx, flags) {
    const output = flags.string("output");
    if (!output)
      throw new AicrError("INVALID_REQUEST", "aicr image save needs -o <archive>", {
        remedy: "pass -o aicr-image.tar (a path that does not exist yet)",
        context: { field: "--output" },
      });
    // Checked before the archive is built (seconds of work): /proc, a device, a missing parent.
    if (output.endsWith("/"))
      throw new AicrError(
        "INVALID_REQUEST",
        `invalid --output ${JSON.stringify(output)}: a directory, not an archive path`,
        {
          remedy: `name the archive file, e.g. -o ${JSON.stringify(`${output}aicr-image.tar`)}`,
          context: { field: "--output", value: output },
        },
      );
    checkFileDestination(output, "--output");
    const saved = await saveImage({
      output,
      executable: process.execPath,
      embedded: Bun.embeddedFiles,
      version: VERSION,
      revision: REVISION,
      repository: IMAGE_REPOSITORY,
    });
    process.stdout.write(`${saved.digest}\n`);
    const size = (await Bun.file(saved.path).stat()).size;
    const ref = `${IMAGE_REPOSITORY}:${releaseTag(VERSION)}`;
    ctx.log.info(
      `wrote ${saved.path}: ${ref} (${saved.platform}), ${mib(size)}, manifest ${saved.digest}, ` +
        `with its SBOM and provenance as referrers (${saved.referrers.map((r) => r.name).join(", ")})`,
    );
  },
});
