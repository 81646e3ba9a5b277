/**
 * Shell completion scripts for bash, zsh and fish, generated from the command map and each command's
 * declared flags (pure: cli.ts builds the model, `aicr completion <shell>` prints the script).
 */
import { aliasesOf, type FlagSpecs, isFlag, takesValue } from "./_flag-spec.ts";

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

export interface CompletionFlag {
  name: string;
  alias?: string | undefined;
  takesValue: boolean;
  /** An enum's values, offered after the flag. */
  values?: readonly string[] | undefined;
  description: string;
}

/** A command's listed flags as completion offers them (hidden ones left out). */
export function completionFlags(specs: FlagSpecs): CompletionFlag[] {
  return Object.entries(specs).flatMap(([name, spec]) =>
    isFlag(spec) && !spec.hidden
      ? [
          {
            name,
            alias: aliasesOf(spec)[0],
            takesValue: takesValue(spec),
            values: takesValue(spec) ? spec.options : undefined,
            description: spec.description ?? "",
          },
        ]
      : [],
  );
}

export interface CompletionCommand {
  /** "snapshot", or "image push" for a verb of a group. */
  path: string;
  description: string;
  /** Every flag it accepts: its own and the global ones it takes. */
  flags: CompletionFlag[];
}

export interface CompletionModel {
  /** Top-level names (commands and groups), public only. */
  top: { name: string; description: string }[];
  /** Group name → its verbs. */
  groups: Record<string, { name: string; description: string }[]>;
  commands: CompletionCommand[];
  /** Offered before a command is given. */
  globalFlags: CompletionFlag[];
}

/** The program names the scripts complete: the binary and its kubectl plugin name. */
const PROGRAMS = ["aicr", "kubectl-aicr"];

const spellings = (flags: readonly CompletionFlag[]): string[] =>
  flags.flatMap((f) => [
    `--${f.name}`,
    ...(f.alias ? [f.alias.length === 1 ? `-${f.alias}` : `--${f.alias}`] : []),
  ]);

const shellWord = (s: string): string => s.replace(/[^A-Za-z0-9_ -]/g, "");

export function completionScript(shell: Shell, model: CompletionModel): string {
  if (shell === "fish") return fishScript(model);
  const bash = bashScript(model);
  return shell === "zsh"
    ? `#compdef aicr kubectl-aicr\n# zsh: through bash completion (bashcompinit)\nautoload -U +X bashcompinit && bashcompinit\n${bash}`
    : bash;
}

function bashScript(m: CompletionModel): string {
  const valueFlags = [...m.globalFlags, ...m.commands.flatMap((c) => c.flags)].filter((f) => f.takesValue);
  // After an enum flag, its values instead of the flags.
  const valuesAfter = (flags: readonly CompletionFlag[]): string => {
    const arms = flags
      .filter((f) => f.values?.length)
      .map(
        (f) =>
          `${spellings([f])
            .map((w) => JSON.stringify(w))
            .join("|")}) words_="${f.values?.join(" ")}" ;;`,
      );
    return arms.length ? ` case "$prev" in ${arms.join(" ")} esac;` : "";
  };
  const cases = m.commands.map(
    (c) =>
      `    ${JSON.stringify(c.path)}) words_="${[...spellings(c.flags), "--help"].join(" ")}";${valuesAfter(c.flags)} ;;`,
  );
  const groupCases = Object.entries(m.groups).map(
    ([g, verbs]) => `    ${JSON.stringify(g)}) words_="${verbs.map((v) => v.name).join(" ")}" ;;`,
  );
  return `# aicr bash completion: source <(aicr completion bash)
_aicr() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" cmd="" i w words_=""
  local value_flags=" ${[...new Set(spellings(valueFlags))].join(" ")} "
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    if [[ "$w" == -* ]]; then
      [[ "$w" != *=* && "$value_flags" == *" $w "* ]] && ((i++))
      continue
    fi
    case "$cmd" in
      "") cmd="$w" ;;
${Object.keys(m.groups)
  .map((g) => `      ${JSON.stringify(g)}) cmd="$cmd $w" ;;`)
  .join("\n")}
    esac
  done
  case "$cmd" in
    "") words_="${m.top.map((t) => t.name).join(" ")} ${spellings(m.globalFlags).join(" ")} --help --version" ;;
${[...groupCases, ...cases].join("\n")}
  esac
  COMPREPLY=($(compgen -W "$words_" -- "$cur"))
}
complete -F _aicr ${PROGRAMS.join(" ")}
`;
}

function fishScript(m: CompletionModel): string {
  const lines = ["# aicr fish completion: aicr completion fish | source"];
  for (const program of PROGRAMS) {
    const c = (rest: string) => lines.push(`complete -c ${program} ${rest}`);
    for (const t of m.top) c(`-f -n __fish_use_subcommand -a ${t.name} -d '${shellWord(t.description)}'`);
    for (const [g, verbs] of Object.entries(m.groups))
      for (const v of verbs)
        c(`-f -n '__fish_seen_subcommand_from ${g}' -a ${v.name} -d '${shellWord(v.description)}'`);
    const flag = (f: CompletionFlag, condition?: string) =>
      c(
        `${condition ? `-n '${condition}' ` : ""}-l ${f.name}${f.alias?.length === 1 ? ` -s ${f.alias}` : ""}${f.takesValue ? " -r" : ""}${f.values?.length ? ` -f -a '${f.values.map(shellWord).join(" ")}'` : ""} -d '${shellWord(f.description)}'`,
      );
    for (const f of m.globalFlags) flag(f, "__fish_use_subcommand");
    for (const cmd of m.commands) {
      const last = cmd.path.split(" ").at(-1) ?? cmd.path;
      for (const f of cmd.flags) flag(f, `__fish_seen_subcommand_from ${last}`);
    }
  }
  return `${lines.join("\n")}\n`;
}
