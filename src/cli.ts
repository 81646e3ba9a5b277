import { type ArgDef, type ArgsDef, type CommandDef, runCommand } from "citty";
import { globalArgs } from "./commands/_args.ts";
import { flagValues, normalizeArgv } from "./commands/_argv.ts";
import {
  type CompletionFlag,
  type CompletionModel,
  completionScript,
  SHELLS,
  type Shell,
} from "./commands/_completion.ts";
import type { CliData } from "./commands/_define.ts";
import { type AicrMeta, defineAicrCommand } from "./commands/_define.ts";
import { renderUsage, usageWidth } from "./commands/_usage.ts";
import { AicrError } from "./core/errors.ts";
import { nearest } from "./core/suggest.ts";
import { BUILT, REVISION, VERSION } from "./core/version.ts";

type Loader = () => Promise<CommandDef<ArgsDef>>;
const lazy =
  (load: () => Promise<{ default: unknown }>): Loader =>
  () =>
    load().then((m) => m.default as CommandDef<ArgsDef>);

interface CommandEntry {
  description: string;
  load: Loader;
  /** Internal (run inside aicr's own pods): runnable, but neither listed in help nor suggested. */
  hidden?: true;
}
/** A verb, or a group of verbs (`aicr image push`): one level of nesting, each verb its own file. */
type Entry = CommandEntry | { description: string; subcommands: Record<string, CommandEntry> };

/** The command map: the plugin seam. A command is listed here only once it works; each loads lazily. */
export const COMMANDS: Record<string, Entry> = {
  snapshot: {
    description: "Capture a GPU node's configuration through a run-isolated agent Job (--local: this host)",
    load: lazy(() => import("./commands/snapshot.ts")),
  },
  "render-rbac": {
    description:
      "Write the RBAC manifests that let an existing ServiceAccount run the agent (applies nothing)",
    load: lazy(() => import("./commands/render-rbac.ts")),
  },
  validate: {
    description: "Check a cluster against a recipe: snapshot readiness, then run-isolated validation Jobs",
    load: lazy(() => import("./commands/validate.ts")),
  },
  diff: {
    description: "Compare two snapshots reading by reading: added, removed and changed readings (drift)",
    load: lazy(() => import("./commands/diff.ts")),
  },
  "cleanup-legacy": {
    description: "Remove the fixed-name objects aicr created before run isolation (guarded, scriptable)",
    load: lazy(() => import("./commands/cleanup-legacy.ts")),
  },
  runs: {
    description: "The runs whose objects are in the cluster: list them, delete a stale one",
    subcommands: {
      list: {
        description: "List the runs in a namespace (-A: all): age, command, Job state, objects",
        load: lazy(() => import("./commands/runs-list.ts")),
      },
      delete: {
        description: "Delete stale runs by their anchor (UID-pinned); the garbage collector takes the rest",
        load: lazy(() => import("./commands/runs-delete.ts")),
      },
    },
  },
  image: {
    description:
      "The agent image: list the images a run uses, push the image archive, save it from this binary",
    subcommands: {
      list: {
        description: "List the images a run uses (agent, validators)",
        load: lazy(() => import("./commands/image-list.ts")),
      },
      push: {
        description: "Push the image archive to a registry over the OCI distribution API (no Docker)",
        load: lazy(() => import("./commands/image-push.ts")),
      },
      save: {
        description: "Write this binary's own image (its platform) as an OCI archive",
        load: lazy(() => import("./commands/image-save.ts")),
      },
    },
  },
  version: {
    description: "Print the version, the git revision and the agent image this build deploys",
    load: lazy(() => import("./commands/version.ts")),
  },
  completion: {
    description: "Print a shell completion script: bash, zsh or fish",
    load: async () => completionCommand(),
  },
  agent: {
    description: "Internal: the in-pod agent",
    load: lazy(() => import("./commands/agent.ts")),
    hidden: true,
  },
  validator: {
    description: "Internal: one built-in validator in its Job's pod",
    load: lazy(() => import("./commands/validator.ts")),
    hidden: true,
  },
};

const isHidden = (e: Entry): boolean => "hidden" in e && e.hidden === true;
const PUBLIC = Object.keys(COMMANDS).filter((name) => !isHidden(COMMANDS[name] as Entry));
/** The agent Job runs `aicr snapshot …` with this set (the contract earlier images keep). */
const AGENT_MODE_ENV = "AICR_AGENT_MODE";

const root: CommandDef<ArgsDef> = {
  meta: {
    name: "aicr",
    version: VERSION,
    description: "Capture the configuration of GPU nodes in a Kubernetes cluster, run-isolated",
  },
  args: globalArgs,
  subCommands: Object.fromEntries(
    PUBLIC.map((name) => [name, { meta: { name, description: COMMANDS[name]?.description } }]),
  ),
};

const flagsOf = (args: ArgsDef): CompletionFlag[] =>
  Object.entries(args)
    .filter(([, d]) => d.type !== "positional")
    .map(([name, d]) => ({
      name,
      alias: aliasesOf(d)[0],
      takesValue: d.type === "string" || d.type === "enum",
      description: (d as { description?: string }).description ?? "",
    }));

/** The completion model: every public command and verb with its own flags (each command is loaded). */
async function completionModel(): Promise<CompletionModel> {
  const model: CompletionModel = { top: [], groups: {}, commands: [], globalFlags: flagsOf(globalArgs) };
  const add = async (path: string, entry: CommandEntry) => {
    const cmd = await entry.load();
    const args = (await (typeof cmd.args === "function" ? cmd.args() : cmd.args)) ?? {};
    // The command's own flags and the global ones it accepts (render-rbac takes no --kubeconfig).
    model.commands.push({ path, description: entry.description, flags: flagsOf(args) });
  };
  for (const name of PUBLIC) {
    const entry = COMMANDS[name] as Entry;
    model.top.push({ name, description: entry.description });
    if ("subcommands" in entry) {
      model.groups[name] = Object.entries(entry.subcommands).map(([verb, e]) => ({
        name: verb,
        description: e.description,
      }));
      for (const [verb, e] of Object.entries(entry.subcommands)) await add(`${name} ${verb}`, e);
    } else await add(name, entry);
  }
  return model;
}

/** aicr completion bash|zsh|fish: the script on stdout (source it, or install it where the shell looks). */
function completionCommand(): CommandDef<ArgsDef> {
  return defineAicrCommand({
    name: "completion",
    announceRun: false,
    cluster: false,
    description: "Print a shell completion script: bash, zsh or fish",
    examples: [
      "source <(aicr completion bash)",
      "source <(aicr completion zsh)",
      "aicr completion fish > ~/.config/fish/completions/aicr.fish",
    ],
    transport: "offline",
    args: { shell: { type: "positional", description: "bash, zsh or fish", required: true } },
    async run(_ctx, args) {
      const shell = args.shell as Shell;
      if (!SHELLS.includes(shell))
        throw new AicrError(
          "INVALID_REQUEST",
          `unknown shell ${JSON.stringify(args.shell)}: expected bash, zsh or fish`,
          {
            remedy:
              "bash: source <(aicr completion bash); zsh: source <(aicr completion zsh); fish: aicr completion fish | source",
            context: { field: "shell", value: args.shell },
          },
        );
      process.stdout.write(completionScript(shell, await completionModel()));
    },
  }) as unknown as CommandDef<ArgsDef>;
}

/** A group's own command, for its usage page: the subcommands with their descriptions. */
function groupCommand(
  name: string,
  description: string,
  subcommands: Record<string, CommandEntry>,
): CommandDef<ArgsDef> {
  return {
    meta: { name, description },
    subCommands: Object.fromEntries(
      Object.entries(subcommands).map(([n, c]) => [n, { meta: { name: n, description: c.description } }]),
    ),
  };
}

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

/**
 * A help page (commands/_usage.ts), plain text wrapped to the terminal: stdout's width, else
 * $COLUMNS, else 80. The root page lists the commands and ends with the exit codes; a command's
 * lists its own flags, then the global flags it takes.
 */
async function usage(cmd: CommandDef<ArgsDef>, parent?: CommandDef<ArgsDef>): Promise<string> {
  const meta = ((await (typeof cmd.meta === "function" ? cmd.meta() : cmd.meta)) ?? {}) as AicrMeta;
  const parentMeta = parent && (await (typeof parent.meta === "function" ? parent.meta() : parent.meta));
  const args = (await (typeof cmd.args === "function" ? cmd.args() : cmd.args)) ?? {};
  const subs = (await (typeof cmd.subCommands === "function" ? cmd.subCommands() : cmd.subCommands)) ?? {};
  const subcommands = await Promise.all(
    Object.entries(subs).map(async ([name, sub]) => {
      const def = await (typeof sub === "function" ? sub() : sub);
      const m = await (typeof def.meta === "function" ? def.meta() : def.meta);
      return { name, description: m?.description ?? "" };
    }),
  );
  const path = parent ? `${parentMeta?.name ?? "aicr"} ${meta.name ?? ""}` : (meta.name ?? "aicr");
  const isRoot = cmd === root;
  const globals = Object.fromEntries(Object.entries(args).filter(([name]) => name in globalArgs));
  return renderUsage(
    {
      path,
      description: meta.description ?? "",
      args,
      globalArgs: globals,
      subcommands,
      examples: meta.examples,
      exitCodes: isRoot,
      footer: subcommands.length ? `Run "${path} <command> --help" for a command's flags.` : undefined,
    },
    usageWidth(process.stdout.columns, process.env),
  );
}

const aliasesOf = (def: ArgDef): string[] => [(def as { alias?: string | string[] }).alias ?? []].flat();

const valueFlags = (args: ArgsDef): Set<string> =>
  new Set(
    Object.entries(args)
      .filter(([, d]) => d.type === "string" || d.type === "enum")
      .flatMap(([n, d]) => [n, ...aliasesOf(d)]),
  );

/** Index of the command name: the first argument that is neither a flag nor a global flag's value. */
function commandIndex(argv: string[]): number {
  const takesValue = valueFlags(globalArgs);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "--") return -1;
    if (arg.startsWith("-")) {
      if (!arg.includes("=") && takesValue.has(arg.replace(/^--?/, ""))) i++;
      continue;
    }
    return i;
  }
  return -1;
}

export interface CliIo {
  signal: AbortSignal;
  stdout: (text: string) => void;
}

export async function runCli(argv: string[], io: CliIo): Promise<void> {
  const wantsHelp = argv.includes("--help") || argv.includes("-h");
  if (argv.length === 1 && argv[0] === "--version") {
    // One line a script can read: the version first (`aicr version -o json` has every field).
    io.stdout(`${VERSION} (revision ${REVISION.slice(0, 12)}, built ${BUILT}, bun ${Bun.version})\n`);
    return;
  }
  const at = commandIndex(argv);
  if (at < 0) {
    if (argv.length === 0 || wantsHelp) return io.stdout(await usage(root));
    normalizeArgv("", argv, globalArgs);
    throw new AicrError("INVALID_REQUEST", "no command given", {
      remedy: 'run "aicr --help" to list the commands',
    });
  }
  const given = argv[at] ?? "";
  const name = given === "snapshot" && process.env[AGENT_MODE_ENV] === "true" ? "agent" : given;
  const group = COMMANDS[name];
  if (!group) {
    const guess = nearest(name, PUBLIC);
    throw new AicrError(
      "INVALID_REQUEST",
      `unknown command ${JSON.stringify(name)}${guess ? `: did you mean "${guess}"?` : ""}`,
      {
        remedy: `use one of: ${PUBLIC.join(", ")} (see "aicr --help")`,
        context: { command: name },
      },
    );
  }
  let rest = [...argv.slice(0, at), ...argv.slice(at + 1)];
  let entry: CommandEntry;
  let parent = root;
  let path = name;
  if ("subcommands" in group) {
    parent = groupCommand(name, group.description, group.subcommands);
    const sub = commandIndex(rest);
    const subName = sub < 0 ? undefined : rest[sub];
    if (subName === undefined) {
      if (wantsHelp || rest.length === 0) return io.stdout(await usage(parent, root));
      throw new AicrError("INVALID_REQUEST", `"aicr ${name}" needs a subcommand`, {
        remedy: `use one of: ${Object.keys(group.subcommands).join(", ")} (see "aicr ${name} --help")`,
      });
    }
    const found = group.subcommands[subName];
    if (!found) {
      const guess = nearest(subName, Object.keys(group.subcommands));
      throw new AicrError(
        "INVALID_REQUEST",
        `unknown command "${name} ${subName}"${guess ? `: did you mean "${name} ${guess}"?` : ""}`,
        {
          remedy: `use one of: ${Object.keys(group.subcommands).join(", ")} (see "aicr ${name} --help")`,
          context: { command: `${name} ${subName}` },
        },
      );
    }
    entry = found;
    path = `${name} ${subName}`;
    rest = [...rest.slice(0, sub), ...rest.slice(sub + 1)];
  } else entry = group;
  const cmd = await entry.load();
  const shown = parent === root ? root : { ...parent, meta: { ...parent.meta, name: `aicr ${name}` } };
  if (wantsHelp) return io.stdout(await usage(cmd, shown));
  const args = (await (typeof cmd.args === "function" ? cmd.args() : cmd.args)) ?? {};
  rest = normalizeArgv(path, rest, args);
  // --config: the file's values become flags absent from the command line (commands/_config-file.ts).
  if (flagValues(rest, "config").length)
    rest = (await import("./commands/_config-file.ts")).applyConfigFile(path, rest, args);
  try {
    await runCommand(cmd, { rawArgs: rest, data: { signal: io.signal } satisfies CliData });
  } catch (err) {
    // citty's own argument errors (missing positional, bad enum) are the operator's input errors.
    if (err instanceof Error && err.name === "CLIError") {
      throw new AicrError("INVALID_REQUEST", `${err.message.replace(ANSI, "")}`, {
        remedy: `run "aicr ${path} --help" for usage`,
      });
    }
    throw err;
  }
}
