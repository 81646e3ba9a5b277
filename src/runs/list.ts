/** aicr runs list: the runs in a scope, grouped by their run-ID label. */
import { visible } from "../core/terminal.ts";
import type { KubeClient } from "../kube/client.ts";
import { readRunObjects } from "./_observe.ts";
import { ageText, groupRuns } from "./_summary.ts";
import type { RunObject, RunsScope, RunView } from "./types.ts";

/**
 * The runs present in scope. With one namespace, a run whose objects are all cluster-scoped is shown
 * only when its namespace (from its ClusterRoleBinding's subjects) is that one or unknown.
 */
export async function listRuns(client: KubeClient, scope: RunsScope): Promise<RunView[]> {
  const runs = groupRuns(await readRunObjects(client, scope));
  if (scope.allNamespaces) return runs;
  return runs.filter((r) => r.namespace === undefined || r.namespace === scope.namespace);
}

/** `Kind/namespace/name` as people read it (made visible: the names are the apiserver's). */
export const objectText = (o: Pick<RunObject, "kind" | "namespace" | "name">): string =>
  visible(`${o.kind}/${o.namespace ? `${o.namespace}/` : ""}${o.name}`);

/**
 * The runs for people: one line per run, then its objects indented. What the cluster named is made
 * visible (core/terminal.ts): a hostile apiserver's escape codes are shown, not obeyed.
 */
export function runsText(runs: RunView[], now: Date = new Date()): string {
  if (runs.length === 0) return "no aicr runs found";
  const rows = [
    ["RUN ID", "AGE", "COMMAND", "NAMESPACE", "JOB", "POD", "OBJECTS"],
    ...runs.map((r) => [
      visible(r.runId),
      ageText(r.created, now),
      r.command,
      visible(r.namespace ?? "-"),
      r.job,
      r.podLive ? "live" : "-",
      String(r.objects.length),
    ]),
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? "").length))) ?? [];
  const line = (row: string[]) =>
    row
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  const out = [line(rows[0] ?? [])];
  runs.forEach((r, i) => {
    out.push(line(rows[i + 1] ?? []));
    for (const o of r.objects) out.push(`    ${objectText(o)}`);
  });
  return out.join("\n");
}

/** The -o json|yaml document. */
export const runsDocument = (runs: RunView[], now: Date = new Date()) => ({
  kind: "RunList",
  runs: runs.map((r) => ({ ...r, age: ageText(r.created, now) })),
});
