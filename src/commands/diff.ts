import { AicrError } from "../core/errors.ts";
import { diffSnapshots } from "../diff/compare.ts";
import { ignoreMatcher } from "../diff/glob.ts";
import { diffDocument, renderText, summaryLine } from "../diff/report.ts";
import { loadBoth, parseDiffSource } from "../diff/source.ts";
import { flagValues } from "./_argv.ts";
import { defineAicrCommand } from "./_define.ts";
import { outputArg, outputFormat, render } from "./_output.ts";

/** Colour only on a terminal, and never with NO_COLOR set (no-color.org: any non-empty value). */
const useColor = (env: Readonly<Record<string, string | undefined>>): boolean =>
  Boolean(process.stdout.isTTY) && !env.NO_COLOR;

/**
 * aicr diff — the readings that differ between two snapshots, by reading path (metadata never
 * counts). Files are read and checked before any cluster request; a cluster is contacted only for cm://.
 */
export default defineAicrCommand({
  name: "diff",
  announceRun: false,
  description: "Compare two snapshots reading by reading: added, removed and changed readings (drift)",
  examples: [
    "aicr diff -b baseline.yaml --target today.yaml",
    "aicr diff -b cm://gpu-operator/golden --target cm://gpu-operator/aicr-snapshot --fail-on-drift",
    "aicr diff -b a.yaml --target b.yaml --ignore 'K8s.image.**' --ignore '**.items.length' -o json",
  ],
  transport: "remote",
  args: {
    baseline: {
      type: "string",
      alias: "b",
      description: "The reference snapshot: a file or cm://<namespace>/<name> (required)",
      valueHint: "src",
    },
    target: {
      type: "string",
      description: "The snapshot compared with it: a file or cm://<namespace>/<name> (required)",
      valueHint: "src",
    },
    "fail-on-drift": {
      type: "boolean",
      description: "Exit 2 (CONFLICT) when any reading differs, after the full report",
    },
    ignore: {
      type: "string",
      description: "Leave out reading paths matching this glob (* within a segment, ** across; repeatable)",
      valueHint: "glob",
    },
    output: outputArg,
  },
  async run(ctx, args, { rawArgs }) {
    // Every flag checked before the first read.
    const format = outputFormat(args.output);
    const baseline = parseDiffSource("--baseline", args.baseline);
    const target = parseDiffSource("--target", args.target);
    const ignored = ignoreMatcher(flagValues(rawArgs, "ignore"));
    const [a, b] = await loadBoth(
      [
        { flag: "--baseline", source: baseline },
        { flag: "--target", source: target },
      ],
      async () => {
        const client = await ctx.transport.connect();
        if (!client) throw new AicrError("INTERNAL", "the remote transport returned no cluster client");
        return client;
      },
      ctx.log,
    );
    const doc = diffDocument(a.name, b.name, diffSnapshots(a.snapshot, b.snapshot, ignored));
    process.stdout.write(render(format, doc, () => renderText(doc, useColor(ctx.env))));
    if (args["fail-on-drift"] && doc.summary.total > 0) {
      throw new AicrError("CONFLICT", `${a.name} and ${b.name} differ: ${summaryLine(doc.summary)}`, {
        remedy: "review the changes above; leave out expected ones with --ignore <path-glob>",
        context: { ...doc.summary },
      });
    }
  },
});
