import { AicrError } from "../core/errors.ts";
import { diffSnapshots } from "../diff/compare.ts";
import { fleetDrift } from "../diff/fleet.ts";
import { fleetDocument, fleetSummaryLine, renderFleetText } from "../diff/fleet-report.ts";
import { loadFleet, resolveFleetBaseline } from "../diff/fleet-source.ts";
import { ignoreMatcher } from "../diff/glob.ts";
import { diffDocument, renderText, summaryLine } from "../diff/report.ts";
import { loadBoth, parseDiffSource } from "../diff/source.ts";
import type { RunContext } from "../run/context.ts";
import { isConfigMapUri } from "../snapshot/cm-uri.ts";
import { defineAicrCommand } from "./_define.ts";
import { type OutputFormat, outputArg, outputFormat, render } from "./_output.ts";

/** Colour only on a terminal, and never with NO_COLOR set (no-color.org: any non-empty value). */
const useColor = (env: Readonly<Record<string, string | undefined>>): boolean =>
  Boolean(process.stdout.isTTY) && !env.NO_COLOR;

/** --fleet's own flag checks, before any file is read. */
function checkFleetFlags(fleet: string, target: string | undefined, baseline: string | undefined): void {
  if (fleet === "") {
    throw new AicrError(
      "INVALID_REQUEST",
      "--fleet needs a value: a directory of snapshots or a multi-document YAML file",
      {
        remedy: "pass --fleet <dir>/ (written by aicr snapshot --all-nodes -o <dir>/) or --fleet fleet.yaml",
        context: { field: "--fleet", value: fleet },
      },
    );
  }
  if (target !== undefined) {
    throw new AicrError("INVALID_REQUEST", "--fleet and --target cannot be used together", {
      remedy:
        "compare two snapshots with --baseline <a> --target <b>, or a fleet with --fleet <dir> [--baseline <node|file>]",
      context: { field: "--target", value: target },
    });
  }
  if (baseline !== undefined && (baseline === "" || isConfigMapUri(baseline))) {
    throw new AicrError(
      "INVALID_REQUEST",
      `invalid --baseline ${JSON.stringify(baseline)} with --fleet: expected a node of the fleet or a snapshot file`,
      {
        remedy:
          "pass a node name, or save the ConfigMap's snapshot to a file (kubectl get cm <name> -n <ns> -o jsonpath='{.data.snapshot\\.yaml}' > base.yaml)",
        context: { field: "--baseline", value: baseline },
      },
    );
  }
}

/** aicr diff --fleet: every snapshot read and checked, then the drift report, then the verdict. */
async function runFleet(
  ctx: RunContext,
  fleetPath: string,
  baselineValue: string | undefined,
  format: OutputFormat,
  ignored: (path: string) => boolean,
  failOnDrift: boolean,
): Promise<void> {
  const fleet = await loadFleet(fleetPath, ctx.log);
  const baseline =
    baselineValue === undefined ? undefined : await resolveFleetBaseline(baselineValue, fleet, ctx.log);
  const result = fleetDrift(fleet.nodes, { ignored, baseline });
  const doc = fleetDocument(fleet.source, result, baseline?.name);
  process.stdout.write(render(format, doc, () => renderFleetText(doc, useColor(ctx.env))));
  if (failOnDrift && result.summary.readings > 0) {
    throw new AicrError(
      "CONFLICT",
      `the fleet ${fleet.source} drifts: ${fleetSummaryLine(result.summary, baseline?.name)}`,
      {
        remedy: "review the readings above; leave out expected ones with --ignore <path-glob>",
        context: { ...result.summary },
      },
    );
  }
}

/**
 * aicr diff — the readings that differ between two snapshots, by reading path (metadata never
 * counts). Files are read and checked before any cluster request; a cluster is contacted only for cm://.
 * With --fleet: many nodes' snapshots, the readings that are not the same on all of them (never a cluster).
 */
export default defineAicrCommand({
  name: "diff",
  announceRun: false,
  examples: [
    "aicr diff -b baseline.yaml --target today.yaml",
    "aicr diff -b cm://gpu-operator/golden --target cm://gpu-operator/aicr-snapshot --fail-on-drift",
    "aicr diff -b a.yaml --target b.yaml --ignore 'K8s.image.**' --ignore '**.items.length' -o json",
    "aicr diff --fleet out/ --fail-on-drift",
    "aicr diff --fleet fleet.yaml --baseline gpu-node-01 -o json",
  ],
  transport: "remote",
  args: {
    baseline: {
      type: "string",
      alias: "b",
      description:
        "The reference snapshot: a file or cm://<namespace>/<name> (required); with --fleet, a node's name or a file",
      valueHint: "src",
    },
    target: {
      type: "string",
      description: "The snapshot compared with it: a file or cm://<namespace>/<name> (required)",
      valueHint: "src",
    },
    fleet: {
      type: "string",
      description:
        "Compare many nodes' snapshots instead: a directory of snapshots or one multi-document YAML file (not with --target)",
      valueHint: "dir|file",
    },
    "fail-on-drift": {
      type: "boolean",
      description: "Exit 2 (CONFLICT) when any reading differs (with --fleet: drifts), after the full report",
    },
    ignore: {
      type: "string",
      description: "Leave out reading paths matching this glob (* within a segment, ** across; repeatable)",
      valueHint: "glob",
      repeatable: true,
    },
    output: outputArg,
  },
  async run(ctx, flags) {
    // Every flag checked before the first read.
    const format = outputFormat(flags.string("output"));
    const fleet = flags.string("fleet");
    const failOnDrift = flags.bool("fail-on-drift");
    if (fleet !== undefined) {
      checkFleetFlags(fleet, flags.string("target"), flags.string("baseline"));
      const ignored = ignoreMatcher(flags.list("ignore"));
      await runFleet(ctx, fleet, flags.string("baseline"), format, ignored, failOnDrift);
      return;
    }
    const baseline = parseDiffSource("--baseline", flags.string("baseline"));
    const target = parseDiffSource("--target", flags.string("target"));
    const ignored = ignoreMatcher(flags.list("ignore"));
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
    if (failOnDrift && doc.summary.total > 0) {
      throw new AicrError("CONFLICT", `${a.name} and ${b.name} differ: ${summaryLine(doc.summary)}`, {
        remedy: "review the changes above; leave out expected ones with --ignore <path-glob>",
        context: { ...doc.summary },
      });
    }
  },
});
