/** The public commands and their declared flags, read from the command map's own modules (as help is). */
import { type AicrCommand, commandGlobals } from "../../src/commands/_define.ts";
import type { FlagSpecs } from "../../src/commands/_flag-spec.ts";

export interface CommandUnderTest {
  /** The words that select it: ["runs", "list"]. */
  words: string[];
  args: FlagSpecs;
}

const MODULES: [string[], () => Promise<{ default: unknown }>][] = [
  [["snapshot"], () => import("../../src/commands/snapshot.ts")],
  [["render-rbac"], () => import("../../src/commands/render-rbac.ts")],
  [["validate"], () => import("../../src/commands/validate.ts")],
  [["diff"], () => import("../../src/commands/diff.ts")],
  [["cleanup-legacy"], () => import("../../src/commands/cleanup-legacy.ts")],
  [["runs", "list"], () => import("../../src/commands/runs-list.ts")],
  [["runs", "delete"], () => import("../../src/commands/runs-delete.ts")],
  [["image", "list"], () => import("../../src/commands/image-list.ts")],
  [["image", "push"], () => import("../../src/commands/image-push.ts")],
  [["image", "save"], () => import("../../src/commands/image-save.ts")],
  [["image", "sign"], () => import("../../src/commands/image-sign.ts")],
  [["image", "verify"], () => import("../../src/commands/image-verify.ts")],
  [["version"], () => import("../../src/commands/version.ts")],
];

/** Every public command; `aicr completion` (built in cli.ts, not a module) as it declares itself. */
export async function loadCommands(): Promise<CommandUnderTest[]> {
  const loaded = await Promise.all(
    MODULES.map(async ([words, load]) => ({ words, args: ((await load()).default as AicrCommand).args })),
  );
  const completion: FlagSpecs = { shell: { type: "positional" }, ...commandGlobals(false) };
  return [...loaded, { words: ["completion"], args: completion }];
}
