import { AicrError } from "../core/errors.ts";
import { isInteractive } from "../legacy/confirm.ts";
import type { Flags } from "./_flags.ts";

/** --yes and --dry-run of the commands that delete (runs delete, cleanup-legacy). */
export const deleteArgs = {
  yes: { type: "boolean", alias: "y", description: "Delete without asking (required without a terminal)" },
  "dry-run": { type: "boolean", description: "Print the plan; delete nothing" },
} as const;

/**
 * A deleting command's consent, checked before any request: --dry-run, --yes, or a terminal to ask
 * on (the operator is then asked after the plan is shown).
 */
export function deleteConsent(flags: Flags): { dryRun: boolean; yes: boolean } {
  const dryRun = flags.bool("dry-run");
  const yes = flags.bool("yes");
  if (!dryRun && !yes && !isInteractive())
    throw new AicrError(
      "INVALID_REQUEST",
      "refusing to delete without confirmation: there is no terminal to ask on and --yes was not given",
      {
        remedy: "pass --yes to delete unattended, or --dry-run to only print the plan; nothing was deleted",
        context: { field: "--yes" },
      },
    );
  return { dryRun, yes };
}
