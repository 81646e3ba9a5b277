import { BUILT, DEFAULT_IMAGE, IMAGE_REPOSITORY, REVISION, VERSION } from "../core/version.ts";
import { defineAicrCommand } from "./_define.ts";
import { outputArg, outputFormat, render } from "./_output.ts";

const ARCH: Record<string, string> = { x64: "amd64", arm64: "arm64" };

/** aicr version: what this binary is and which image it deploys by default. */
export default defineAicrCommand({
  name: "version",
  announceRun: false,
  cluster: false,
  transport: "offline",
  args: { output: outputArg },
  async run(_ctx, flags) {
    const format = outputFormat(flags.string("output"));
    const info = {
      version: VERSION,
      revision: REVISION,
      built: BUILT,
      image: DEFAULT_IMAGE,
      imageRepository: IMAGE_REPOSITORY,
      platform: `${process.platform}/${ARCH[process.arch] ?? process.arch}`,
      runtime: `bun ${Bun.version}`,
    };
    const text = () =>
      [
        `aicr ${info.version}`,
        `  revision:  ${info.revision}`,
        `  built:     ${info.built}`,
        `  image:     ${info.image}`,
        `  platform:  ${info.platform}`,
        `  runtime:   ${info.runtime}`,
      ].join("\n");
    process.stdout.write(render(format, info, text));
  },
});
