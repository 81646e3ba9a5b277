/** aicr completion: scripts that parse, and bash completion of commands, verbs and flags, run in bash itself. */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { aicr } from "./_aicr.ts";

/** What bash completion offers for `words` (the cursor on the last one), through the generated script. */
function complete(script: string, words: string[]): string[] {
  const dir = mkdtempSync(join(tmpdir(), "aicr-completion-"));
  try {
    const file = join(dir, "aicr.bash");
    writeFileSync(file, script);
    const quoted = words.map((w) => `'${w}'`).join(" ");
    const r = Bun.spawnSync(
      [
        "bash",
        "-c",
        `source '${file}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _aicr; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      { stdout: "pipe", stderr: "pipe" },
    );
    if (r.exitCode !== 0) throw new Error(r.stderr.toString());
    return r.stdout.toString().split("\n").filter(Boolean);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("aicr completion", () => {
  let bash = "";

  test("bash: the script passes bash -n; nothing else on stdout", async () => {
    const r = await aicr(["completion", "bash"]);
    expect(r.code, r.stderr).toBe(0);
    bash = r.stdout;
    const check = Bun.spawnSync(["bash", "-n"], { stdin: new TextEncoder().encode(bash), stderr: "pipe" });
    expect(check.stderr.toString()).toBe("");
    expect(check.exitCode).toBe(0);
    expect(bash).toContain("complete -F _aicr aicr kubectl-aicr");
  });

  test("bash completes commands (never the internal ones), group verbs and each command's flags", () => {
    expect(complete(bash, ["aicr", "sn"])).toEqual(["snapshot"]);
    expect(complete(bash, ["aicr", ""])).toEqual(
      expect.arrayContaining([
        "snapshot",
        "validate",
        "render-rbac",
        "cleanup-legacy",
        "image",
        "version",
        "completion",
      ]),
    );
    expect(complete(bash, ["aicr", ""])).not.toContain("agent");
    expect(complete(bash, ["aicr", "va"])).toEqual(["validate"]);
    expect(complete(bash, ["aicr", "image", "p"])).toEqual(["push"]);
    expect(complete(bash, ["aicr", "snapshot", "--ou"])).toEqual(["--output"]);
    expect(complete(bash, ["aicr", "image", "push", "--pass"])).toEqual(["--password-stdin"]);
    // A global flag's value is not taken for the command.
    expect(complete(bash, ["aicr", "-n", "demo", "snap"])).toEqual(["snapshot"]);
    expect(complete(bash, ["aicr", "validate", "--rec"])).toEqual(["--recipe"]);
    // Only the flags a command takes: render-rbac never contacts a cluster.
    expect(complete(bash, ["aicr", "snapshot", "--kube"])).toEqual(["--kubeconfig"]);
    expect(complete(bash, ["aicr", "render-rbac", "--kube"])).toEqual([]);
  });

  test("after an enum flag bash offers its declared values, not the flags", () => {
    expect(complete(bash, ["aicr", "diff", "-o", ""])).toEqual(["text", "json", "yaml"]);
    expect(complete(bash, ["aicr", "validate", "--phase", "de"])).toEqual(["deployment"]);
    expect(complete(bash, ["aicr", "snapshot", "-t", "t"])).toEqual(["table"]);
    // A flag that takes any value: the flags are still offered after it is complete.
    expect(complete(bash, ["aicr", "snapshot", "--timeout", "--ou"])).toEqual(["--output"]);
  });

  test("zsh (through bashcompinit) and fish scripts name the same commands", async () => {
    const zsh = await aicr(["completion", "zsh"]);
    expect(zsh.code).toBe(0);
    expect(zsh.stdout).toStartWith("#compdef aicr kubectl-aicr\n");
    expect(zsh.stdout).toContain("bashcompinit");
    const fish = await aicr(["completion", "fish"]);
    expect(fish.code).toBe(0);
    expect(fish.stdout).toContain("complete -c aicr -f -n __fish_use_subcommand -a snapshot");
    expect(fish.stdout).toContain("-n '__fish_seen_subcommand_from image' -a push");
    expect(fish.stdout).not.toContain("-a agent ");
  });

  test("an unknown shell: exit 2 naming it and the three it knows", async () => {
    const r = await aicr(["completion", "tcsh"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown shell "tcsh": expected bash, zsh or fish');
    expect(r.stdout).toBe("");
  });
});
