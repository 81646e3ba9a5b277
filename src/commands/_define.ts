import { type ArgsDef, type CommandDef, defineCommand, type ParsedArgs } from "citty";
import { createRunContext, type RunContext } from "../run/context.ts";
import type { TransportName } from "../transport/types.ts";
import { globalArgs } from "./_args.ts";

export interface CliData {
  signal: AbortSignal;
}

type WithGlobals<A extends ArgsDef> = A & typeof globalArgs;

/**
 * A command in aicr's shape: the global flags are spread in, and `run` receives the one run context
 * this invocation creates, built from those flags.
 */
export function defineAicrCommand<A extends ArgsDef>(def: {
  name: string;
  /** The group a subcommand belongs to (`image` for `aicr image push`). */
  group?: string;
  description: string;
  /**
   * false for commands that neither touch a cluster nor name objects (version, image): no run-ID
   * line on stderr (the run ID still exists, at debug level).
   */
  announceRun?: boolean;
  args: A;
  /** The transport, fixed or chosen from the flags and environment (e.g. agent mode). */
  transport: TransportName | ((args: ParsedArgs<WithGlobals<A>>, env: NodeJS.ProcessEnv) => TransportName);
  /** `rawArgs` is the command's own argv, for repeatable flags (citty keeps only the last value). */
  run: (ctx: RunContext, args: ParsedArgs<WithGlobals<A>>, raw: { rawArgs: string[] }) => Promise<void>;
}): CommandDef<WithGlobals<A>> {
  const args = { ...def.args, ...globalArgs } as WithGlobals<A>;
  return defineCommand({
    meta: { name: def.name, description: def.description },
    args,
    async run({ args: parsed, data, rawArgs }) {
      const { signal } = data as CliData;
      const ctx = createRunContext({
        command: def.group ? `${def.group} ${def.name}` : def.name,
        announce: def.announceRun ?? true,
        transport: typeof def.transport === "function" ? def.transport(parsed, process.env) : def.transport,
        signal,
        flags: {
          runId: parsed["run-id"],
          debug: parsed.debug,
          logJson: parsed["log-json"],
          kubeconfig: parsed.kubeconfig,
          context: parsed.context,
        },
      });
      await def.run(ctx, parsed, { rawArgs });
    },
  });
}
