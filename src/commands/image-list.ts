import { runImages } from "../image/refs.ts";
import { defineAicrCommand } from "./_define.ts";
import { outputArg, outputFormat, render } from "./_output.ts";

/** aicr image list: the images a run of this binary deploys, one line per role. */
export default defineAicrCommand({
  name: "list",
  group: "image",
  announceRun: false,
  cluster: false,
  transport: "offline",
  args: {
    output: outputArg,
    quiet: {
      type: "boolean",
      alias: "q",
      description: "Print each distinct image reference once, nothing else",
    },
  },
  async run(ctx, flags) {
    const format = outputFormat(flags.string("output"));
    const images = runImages(ctx.env);
    if (flags.bool("quiet")) {
      process.stdout.write(`${[...new Set(images.map((i) => i.image))].join("\n")}\n`);
      return;
    }
    const width = Math.max(...images.map((i) => i.role.length));
    const text = () => images.map((i) => `${i.role.padEnd(width)}  ${i.image}  (${i.source})`).join("\n");
    process.stdout.write(render(format, { images }, text));
  },
});
