import { createRunContext, type RunContext } from "../run/context.ts";
import type { TransportName } from "../transport/types.ts";
import { checkOneContext, globalArgs, verbosity } from "./_args.ts";
import type { FlagSpec, FlagSpecs } from "./_flag-spec.ts";
import { type Flags, loggingSwitches } from "./_flags.ts";

type Globals = typeof globalArgs;
type GlobalName = keyof Globals;

/** `--config <file>` as a command that takes one declares it (only the flag: _config-file.ts reads it). */
export const configArg = (command: string) =>
  ({
    config: {
      type: "string",
      description: `AICRConfig file (YAML or JSON): spec.${command} gives flags values; flags given here win, a repeatable one's replace the file's (examples/aicr-config.yaml)`,
      valueHint: "file",
      notInConfig: "a config file cannot name another one",
    },
  }) as const satisfies FlagSpecs;

/** The global flags a command takes: without --kubeconfig/--context when it has no cluster. */
export function commandGlobals(cluster: boolean): FlagSpecs {
  if (cluster) return globalArgs;
  const { kubeconfig: _k, context: _c, ...rest } = globalArgs;
  return rest;
}

/**
 * A command in aicr's shape: its flags declared once (its own, `--config` when it takes one, the
 * global ones), and `run` given the one run context this invocation creates and the flag values.
 * Its description is the command map's (cli.ts), written once.
 */
export interface AicrCommand<K extends string = string> {
  name: string;
  /** The group a subcommand belongs to (`image` for `aicr image push`). */
  group?: string | undefined;
  /** Command lines shown under "Examples:" in its help. */
  examples?: readonly string[] | undefined;
  /** true: it takes `--config <file>` (cli.ts merges the file's `spec.<name>` values). */
  config: boolean;
  /** Every flag and positional it takes. */
  args: FlagSpecs;
  run(flags: Flags<K>, signal: AbortSignal): Promise<void>;
}

/** The keys of a command's flags: its own, the global ones and --config. */
export type KeysOf<A extends FlagSpecs> = (keyof A & string) | GlobalName | "config";

export function defineAicrCommand<A extends FlagSpecs>(def: {
  name: string;
  group?: string;
  examples?: readonly string[];
  /**
   * false for commands that never contact a cluster: --kubeconfig and --context are neither
   * accepted nor listed (default true).
   */
  cluster?: boolean;
  /** A global flag as this command reads it (e.g. validate's own -n default, cleanup-legacy's -n list). */
  globals?: Partial<Record<GlobalName, Partial<FlagSpec>>>;
  /**
   * false for commands that neither touch a cluster nor name objects (version, image): no run-ID
   * line on stderr (the run ID still exists, at debug level).
   */
  announceRun?: boolean;
  config?: boolean;
  /** true: `--context` may be repeated (aicr snapshot: commands/_contexts.ts); otherwise a second one is refused. */
  severalContexts?: boolean;
  args: A;
  /** The transport, fixed or chosen from the flags and environment (e.g. agent mode). */
  transport: TransportName | ((flags: Flags<KeysOf<A>>, env: NodeJS.ProcessEnv) => TransportName);
  run: (ctx: RunContext, flags: Flags<KeysOf<A>>) => Promise<void>;
}): AicrCommand<KeysOf<A>> {
  const globals = Object.fromEntries(
    Object.entries(commandGlobals(def.cluster ?? true)).map(([name, spec]) => {
      const override = def.globals?.[name as GlobalName];
      return [name, override ? { ...spec, ...override } : spec];
    }),
  ) as FlagSpecs;
  const command = def.group ? `${def.group} ${def.name}` : def.name;
  return {
    name: def.name,
    group: def.group,
    examples: def.examples,
    config: def.config ?? false,
    args: { ...def.args, ...(def.config ? configArg(def.name) : {}), ...globals },
    async run(flags, signal) {
      if (!def.severalContexts && flags.specs.context) checkOneContext(command, flags.list("context"));
      const logging = loggingSwitches(flags.parsed, process.env);
      const ctx = createRunContext({
        command,
        announce: def.announceRun ?? true,
        transport: typeof def.transport === "function" ? def.transport(flags, process.env) : def.transport,
        signal,
        flags: {
          runId: flags.string("run-id"),
          debug: logging.debug || verbosity(flags.string("v")) >= 4,
          logJson: logging.json,
          kubeconfig: flags.specs.kubeconfig ? flags.string("kubeconfig") : undefined,
          context: flags.specs.context ? flags.string("context") : undefined,
        },
      });
      await def.run(ctx, flags);
    },
  };
}
