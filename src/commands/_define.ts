import { type ArgsDef, type CommandDef, type CommandMeta, defineCommand, type ParsedArgs } from "citty";
import { createRunContext, type RunContext } from "../run/context.ts";
import type { TransportName } from "../transport/types.ts";
import { checkOneContext, globalArgs, verbosity } from "./_args.ts";

export interface CliData {
  signal: AbortSignal;
}

/** The global flags of a command that never contacts a cluster: no --kubeconfig, no --context. */
type OfflineGlobals = Omit<typeof globalArgs, "kubeconfig" | "context">;
type WithGlobals<A extends ArgsDef> = A & typeof globalArgs;

/** citty's meta plus what aicr's help shows: examples (one command line each). */
export interface AicrMeta extends CommandMeta {
  examples?: readonly string[];
}

/** The global flags a command takes: without --kubeconfig/--context when it has no cluster. */
export function commandGlobals(cluster: boolean): ArgsDef {
  if (cluster) return globalArgs;
  const { kubeconfig: _k, context: _c, ...rest } = globalArgs;
  return rest satisfies OfflineGlobals;
}

/** `--config <file>` as a command that takes one declares it (only the flag: _config-file.ts reads it). */
export const configArg = (command: string): ArgsDef => ({
  config: {
    type: "string",
    description: `AICRConfig file (YAML or JSON): spec.${command} gives flags values; flags given here win, a repeatable one's replace the file's (examples/aicr-config.yaml)`,
    valueHint: "file",
  },
});

/**
 * A command in aicr's shape: the global flags are spread in, and `run` receives the one run context
 * this invocation creates, built from those flags.
 */
export function defineAicrCommand<A extends ArgsDef>(def: {
  name: string;
  /** The group a subcommand belongs to (`image` for `aicr image push`). */
  group?: string;
  description: string;
  /** Command lines shown under "Examples:" in its help. */
  examples?: readonly string[];
  /**
   * false for commands that never contact a cluster: --kubeconfig and --context are neither
   * accepted nor listed (default true).
   */
  cluster?: boolean;
  /** A global flag's description as this command reads it (e.g. validate's own -n default). */
  globalDescriptions?: Partial<Record<keyof typeof globalArgs, string>>;
  /**
   * false for commands that neither touch a cluster nor name objects (version, image): no run-ID
   * line on stderr (the run ID still exists, at debug level).
   */
  announceRun?: boolean;
  /**
   * true: the command takes `--config <file>`, an AICRConfig document whose `spec.<name>` section
   * gives its flags values (read by cli.ts through commands/_config-file.ts before citty parses argv).
   */
  config?: boolean;
  /** true: `--context` may be repeated (aicr snapshot: commands/_contexts.ts); otherwise a second one is refused. */
  severalContexts?: boolean;
  args: A;
  /** The transport, fixed or chosen from the flags and environment (e.g. agent mode). */
  transport: TransportName | ((args: ParsedArgs<WithGlobals<A>>, env: NodeJS.ProcessEnv) => TransportName);
  /** `rawArgs` is the command's own argv, for repeatable flags (citty keeps only the last value). */
  run: (ctx: RunContext, args: ParsedArgs<WithGlobals<A>>, raw: { rawArgs: string[] }) => Promise<void>;
}): CommandDef<WithGlobals<A>> {
  const globals: ArgsDef = Object.fromEntries(
    Object.entries(commandGlobals(def.cluster ?? true)).map(([name, arg]) => {
      const description = def.globalDescriptions?.[name as keyof typeof globalArgs];
      return [name, description ? { ...arg, description } : arg];
    }),
  );
  const args = { ...def.args, ...(def.config ? configArg(def.name) : {}), ...globals } as WithGlobals<A>;
  const meta: AicrMeta = { name: def.name, description: def.description, examples: def.examples };
  return defineCommand({
    meta,
    args,
    async run({ args: parsed, data, rawArgs }) {
      const { signal } = data as CliData;
      if (!def.severalContexts) checkOneContext(def.group ? `${def.group} ${def.name}` : def.name, rawArgs);
      const ctx = createRunContext({
        command: def.group ? `${def.group} ${def.name}` : def.name,
        announce: def.announceRun ?? true,
        transport: typeof def.transport === "function" ? def.transport(parsed, process.env) : def.transport,
        signal,
        flags: {
          runId: parsed["run-id"],
          debug: parsed.debug || verbosity(parsed.v) >= 4,
          logJson: parsed["log-json"],
          kubeconfig: parsed.kubeconfig,
          context: parsed.context,
        },
      });
      await def.run(ctx, parsed, { rawArgs });
    },
  });
}
