/** The 409 an apply with conflicting field owners gets, worded as the apiserver's field manager words it. */
import type { ManagedFieldsEntry } from "./apply.ts";

export interface FieldConflict {
  manager: string;
  /** Rendered as structured-merge-diff prints paths, e.g. `.data.key`. */
  field: string;
}

/** A 409 Conflict (reason Conflict) with one StatusCause of type FieldManagerConflict per field. */
export class ApplyConflictError extends Error {
  readonly code = 409;
  readonly reason = "Conflict";
  constructor(
    readonly conflicts: FieldConflict[],
    private readonly managers: Map<string, ManagedFieldsEntry>,
  ) {
    super(conflictMessage(conflicts, managers));
    this.name = "ApplyConflictError";
  }
  get causes(): { type: string; message: string; field: string }[] {
    return this.conflicts.map((c) => ({
      type: "FieldManagerConflict",
      message: `conflict with ${printManager(this.managers.get(c.manager), c.manager)}`,
      field: c.field,
    }));
  }
}

function printManager(entry: ManagedFieldsEntry | undefined, name: string): string {
  const q = JSON.stringify(name);
  if (entry?.operation !== "Update") return q;
  return entry.time ? `${q} using ${entry.apiVersion} at ${entry.time}` : `${q} using ${entry.apiVersion}`;
}

function conflictMessage(conflicts: FieldConflict[], managers: Map<string, ManagedFieldsEntry>): string {
  if (conflicts.length === 1) {
    const c = conflicts[0]!;
    return `Apply failed with 1 conflict: conflict with ${printManager(managers.get(c.manager), c.manager)}: ${c.field}`;
  }
  const lines: string[] = [];
  for (const m of [...new Set(conflicts.map((c) => c.manager))].sort()) {
    lines.push(`conflicts with ${printManager(managers.get(m), m)}:`);
    for (const c of conflicts.filter((x) => x.manager === m)) lines.push(`- ${c.field}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join("\n")}`;
}
