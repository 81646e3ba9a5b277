import { type CommandDef, defineCommand, runCommand } from "citty";
import { globalArgs } from "./commands/_args.ts";
import { commandIndex, commandLine, helpAsked, readArgv, versionAsked } from "./commands/_argv.ts";
import {
  type CompletionModel,
  completionFlags,
  completionScript,
  SHELLS,
  type Shell,
} from "./commands/_completion.ts";
import { type AicrCommand, defineAicrCommand } from "./commands/_define.ts";
import { checkRequired, Flags, loggingOf, loggingSwitches } from "./commands/_flags.ts";
import { renderUsage, usageWidth } from "./commands/_usage.ts";
import { AicrError } from "./core/errors.ts";
import { nearest } from "./core/suggest.ts";
import { BUILT, REVISION, VERSION } from "./core/version.ts";

type Loader = () => Promise<AicrCommand>;
const lazy =
  (load: () => Promise<{ default: unknown }>): Loader =>
  () =>
    load().then((m) => m.default as AicrCommand);

interface CommandEntry {
  /** The command's description, written here only: the root page lists it without loading the command. */
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
    description:
      "Compare two snapshots reading by reading: added, removed and changed readings (drift); or a fleet's snapshots (--fleet)",
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
        description:
          "List the aicr runs whose objects are in the cluster (-A: every namespace): age, command, Job state, objects",
        load: lazy(() => import("./commands/runs-list.ts")),
      },
      delete: {
        description:
          "Delete stale runs by their anchor ClusterRole (UID-pinned); the garbage collector takes the rest",
        load: lazy(() => import("./commands/runs-delete.ts")),
      },
    },
  },
  image: {
    description:
      "The agent image: list the images a run uses, push the image archive, save it from this binary, sign and verify it",
    subcommands: {
      list: {
        description:
          "List the images a run uses (agent, validators), after $AICR_IMAGE / $AICR_VALIDATOR_IMAGE",
        load: lazy(() => import("./commands/image-list.ts")),
      },
      push: {
        description:
          "Push an OCI image archive to a registry (no Docker needed; resumes and skips what is there)",
        load: lazy(() => import("./commands/image-push.ts")),
      },
      save: {
        description:
          "Write this binary's image (its platform only) as an OCI archive: docker load, skopeo, image push",
        load: lazy(() => import("./commands/image-save.ts")),
      },
      sign: {
        description:
          "Sign an OCI image archive in place with an ECDSA P-256 key: the index, each platform manifest, its SBOM and provenance (cosign's format)",
        load: lazy(() => import("./commands/image-sign.ts")),
      },
      verify: {
        description:
          "Verify an image archive or registry image offline: signatures by a key, its SBOM and provenance attached",
        load: lazy(() => import("./commands/image-verify.ts")),
      },
    },
  },
  version: {
    description: "Print the version, the git revision and the agent image this build deploys by default",
    load: lazy(() => import("./commands/version.ts")),
  },
  completion: {
    description: "Print a shell completion script: bash, zsh or fish",
    load: async () => completionCommand(),
  },
  agent: {
    description: "Internal: the in-pod agent (collect this node, write the snapshot ConfigMap)",
    load: lazy(() => import("./commands/agent.ts")),
    hidden: true,
  },
  validator: {
    description: "Internal: run one built-in validator (inside its Job's pod)",
    load: lazy(() => import("./commands/validator.ts")),
    hidden: true,
  },
  probe: {
    description: "Internal: what a conformance check's pods run (GPU device nodes seen, or a sleep)",
    load: lazy(() => import("./commands/probe.ts")),
    hidden: true,
  },
};

const isHidden = (e: Entry): boolean => "hidden" in e && e.hidden === true;
const PUBLIC = Object.keys(COMMANDS).filter((name) => !isHidden(COMMANDS[name] as Entry));
/** The agent Job runs `aicr snapshot …` with this set (the contract earlier images keep). */
const AGENT_MODE_ENV = "AICR_AGENT_MODE";

const ROOT_DESCRIPTION = "Capture the configuration of GPU nodes in a Kubernetes cluster, run-isolated";

/** The completion model: every public command and verb with its own flags (each command is loaded). */
async function completionModel(): Promise<CompletionModel> {
  const model: CompletionModel = {
    top: [],
    groups: {},
    commands: [],
    globalFlags: completionFlags(globalArgs),
  };
  const add = async (path: string, entry: CommandEntry) => {
    const cmd = await entry.load();
    // The command's own flags and the global ones it accepts (render-rbac takes no --kubeconfig).
    model.commands.push({ path, description: entry.description, flags: completionFlags(cmd.args) });
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
function completionCommand(): AicrCommand {
  return defineAicrCommand({
    name: "completion",
    announceRun: false,
    cluster: false,
    examples: [
      "source <(aicr completion bash)",
      "source <(aicr completion zsh)",
      "aicr completion fish > ~/.config/fish/completions/aicr.fish",
    ],
    transport: "offline",
    args: {
      shell: { type: "positional", description: "bash, zsh or fish", valueHint: SHELLS.join("|") },
    },
    async run(_ctx, flags) {
      const shell = flags.string("shell") as Shell;
      if (!SHELLS.includes(shell))
        throw new AicrError(
          "INVALID_REQUEST",
          `unknown shell ${JSON.stringify(shell)}: expected bash, zsh or fish`,
          {
            remedy:
              "bash: source <(aicr completion bash); zsh: source <(aicr completion zsh); fish: aicr completion fish | source",
            context: { field: "shell", value: shell },
          },
        );
      process.stdout.write(completionScript(shell, await completionModel()));
    },
  }) as unknown as AicrCommand;
}

/** A help page (commands/_usage.ts), plain text wrapped to the terminal: stdout's width, else $COLUMNS, else 80. */
const page = (text: Parameters<typeof renderUsage>[0]): string =>
  renderUsage(text, usageWidth(process.stdout.columns, process.env));

/** The root page: the commands, the global flags, the exit codes. */
const rootUsage = (): string =>
  page({
    path: "aicr",
    description: ROOT_DESCRIPTION,
    args: globalArgs,
    globalArgs,
    subcommands: PUBLIC.map((name) => ({ name, description: COMMANDS[name]?.description ?? "" })),
    exitCodes: true,
    footer: 'Run "aicr <command> --help" for a command\'s flags.',
  });

/** A group's page: its verbs. */
const groupUsage = (
  name: string,
  group: { description: string; subcommands: Record<string, CommandEntry> },
) =>
  page({
    path: `aicr ${name}`,
    description: group.description,
    subcommands: Object.entries(group.subcommands).map(([n, c]) => ({ name: n, description: c.description })),
    footer: `Run "aicr ${name} <command> --help" for a command's flags.`,
  });

/** A command's page: its own flags, then the global ones it takes, then its examples. */
const commandUsage = (path: string, description: string, cmd: AicrCommand): string =>
  page({
    path: `aicr ${path}`,
    description,
    args: cmd.args,
    globalArgs: Object.fromEntries(Object.entries(cmd.args).filter(([name]) => name in globalArgs)),
    examples: cmd.examples,
  });

export interface CliIo {
  signal: AbortSignal;
  stdout: (text: string) => void;
  /** Told --log-json and --debug as soon as argv is read (so far as it could be), for main's report. */
  logging?: (flags: { json: boolean; debug: boolean }) => void;
}

/** One invocation: `argv` (the process's own by default) routed, read once, and its command run. */
export async function runCli(io: CliIo, argv: readonly string[] = commandLine()): Promise<void> {
  const wantsHelp = helpAsked(argv);
  if (versionAsked(argv)) {
    // One line a script can read: the version first (`aicr version -o json` has every field).
    io.stdout(`${VERSION} (revision ${REVISION.slice(0, 12)}, built ${BUILT}, bun ${Bun.version})\n`);
    return;
  }
  /** argv read against `specs`: main hears the logging flags even when the reading is refused. */
  const read = (path: string, words: readonly string[], specs: AicrCommand["args"]) => {
    const reading = readArgv(path, words, specs);
    io.logging?.(loggingOf(reading.parsed));
    return reading;
  };
  const at = commandIndex(argv, globalArgs);
  if (at < 0) {
    if (argv.length === 0 || wantsHelp) return io.stdout(rootUsage());
    const { problem } = read("", argv, globalArgs);
    if (problem) throw problem;
    throw new AicrError("INVALID_REQUEST", "no command given", {
      remedy: 'run "aicr --help" to list the commands',
    });
  }
  const given = argv[at] ?? "";
  const name = given === "snapshot" && process.env[AGENT_MODE_ENV] === "true" ? "agent" : given;
  let rest = [...argv.slice(0, at), ...argv.slice(at + 1)];
  const group = COMMANDS[name];
  if (!group) {
    read("", rest, globalArgs);
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
  let entry: CommandEntry;
  let path = name;
  if ("subcommands" in group) {
    const sub = commandIndex(rest, globalArgs);
    const subName = sub < 0 ? undefined : rest[sub];
    if (subName === undefined) {
      if (wantsHelp || rest.length === 0) return io.stdout(groupUsage(name, group));
      read(name, rest, globalArgs);
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
  if (wantsHelp) return io.stdout(commandUsage(path, entry.description, cmd));
  const reading = read(path, rest, cmd.args);
  if (reading.problem) throw reading.problem;
  // AICR_DEBUG / AICR_LOG_JSON where the flags do not decide: a bad value is refused before anything runs.
  loggingSwitches(reading.parsed);
  // --config: the file's values for the flags the command line does not give (commands/_config-file.ts).
  const parsed = reading.parsed.values.has("config")
    ? (await import("./commands/_config-file.ts")).applyConfigFile(path, reading.parsed, cmd.args)
    : reading.parsed;
  checkRequired(path, cmd.args, parsed);
  // citty runs the command the map routed to; the flags are read already (one parse).
  const command: CommandDef = defineCommand({
    meta: { name: path, description: entry.description },
    run: () => cmd.run(new Flags(cmd.args, parsed), io.signal),
  });
  await runCommand(command, { rawArgs: [] });
}
