/**
 * Issue 25, item 9, from the compiled binary: a reading value holding `ESC]0;…BEL ESC[2J` (a window
 * title, a cleared screen; a ConfigMap others can write may hold it) is shown escaped — `\u001b` —
 * by every human-facing report, never sent to the terminal; the machine outputs keep the exact value;
 * on a terminal our own colours still appear. No cluster.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { rawControls } from "../support/raw-controls.ts";
import { AICR, aicr, baseEnv, ensureBuilt } from "./_aicr.ts";

const ATTACK = "\x1b]0;pwned\x07\x1b[2J";
/** As the reports show it (core/terminal.ts). */
const SHOWN = "\\u001b]0;pwned\\u0007\\u001b[2J";
/** As YAML writes it in a double-quoted scalar: the file itself holds no control character. */
const IN_YAML = "\\e]0;pwned\\a\\e[2J";

/** A snapshot whose OS.release.PRETTY_NAME is `pretty` (a YAML double-quoted scalar's body). */
const snapshot = (node: string, pretty: string): string => `apiVersion: aicr.run/v1
kind: Snapshot
metadata:
  timestamp: "2026-01-10T08:00:00Z"
  version: v0.1.0
  source-node: ${node}
measurements:
  - type: OS
    subtypes:
      - subtype: release
        data:
          ID: ubuntu
          VERSION_ID: "24.04"
          PRETTY_NAME: "${pretty}"
`;

let dir: string;
let env: Record<string, string>;
let a: string;
let b: string;
let fleet: string;
let recipe: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "aicr-escapes-"));
  const kubeconfig = join(dir, "kubeconfig");
  writeFileSync(kubeconfig, "this is not a kubeconfig: [");
  env = baseEnv({ KUBECONFIG: kubeconfig });
  a = join(dir, "a.yaml");
  b = join(dir, "b.yaml");
  writeFileSync(a, snapshot("gpu-node-1", "Ubuntu 24.04"));
  writeFileSync(b, snapshot("gpu-node-2", `Ubuntu ${IN_YAML}`));
  fleet = join(dir, "fleet");
  mkdirSync(fleet);
  for (const [i, pretty] of ["Ubuntu 24.04", "Ubuntu 24.04", `Ubuntu ${IN_YAML}`].entries())
    writeFileSync(join(fleet, `gpu-node-${i + 1}.yaml`), snapshot(`gpu-node-${i + 1}`, pretty));
  recipe = join(dir, "recipe.yaml");
  writeFileSync(
    recipe,
    `kind: RecipeMetadata
spec:
  constraints:
    - {name: OS.release.ID, value: ubuntu}
    - {name: OS.release.PRETTY_NAME, value: "Ubuntu 24.04"}
`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** No ESC, no BEL, no other control a terminal would obey; the escaped form instead. */
function expectEscaped(text: string): void {
  expect(text).not.toContain("\x1b");
  expect(text).not.toContain("\x07");
  expect(rawControls(text)).toEqual([]);
  expect(text).toContain(SHOWN);
}

/** Runs the binary on a pseudo-terminal (python3's pty, as test/e2e/cleanup-legacy does): what it showed. */
const PTY_DRIVER = `
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
out = b""
try:
    while True:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        out += chunk
except OSError:
    pass
os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
`;

async function onTerminal(args: string[]): Promise<string> {
  await ensureBuilt();
  const { NO_COLOR: _none, ...colourEnv } = env;
  const proc = Bun.spawn(["python3", "-c", PTY_DRIVER, AICR, ...args], {
    env: { ...colourEnv, TERM: "xterm" },
    stdout: "pipe",
    stderr: "inherit",
  });
  const [text] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  return text;
}

describe("terminal escapes in reading values (issue 25, item 9)", () => {
  test("aicr diff -b/--target: the value is shown escaped and quoted; -o json keeps it exactly", async () => {
    const r = await aicr(["diff", "-b", a, "--target", b], { env });
    expect(r.code, r.stderr).toBe(0);
    expectEscaped(r.stdout);
    expect(r.stdout).toContain(`  ~ OS.release.PRETTY_NAME: Ubuntu 24.04 -> "Ubuntu ${SHOWN}"\n`);

    const json = await aicr(["diff", "-b", a, "--target", b, "-o", "json"], { env });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).changes[0].target).toBe(`Ubuntu ${ATTACK}`);
    expect(json.stdout).not.toContain("\x1b");
    const yaml = await aicr(["diff", "-b", a, "--target", b, "-o", "yaml"], { env });
    expect(parseYaml(yaml.stdout).changes[0].target).toBe(`Ubuntu ${ATTACK}`);
    expect(yaml.stdout).not.toContain("\x1b");
  });

  test("aicr diff --fleet: the drifting value is shown escaped, on one line", async () => {
    const r = await aicr(["diff", "--fleet", fleet, "--fail-on-drift"], { env });
    expect(r.code).toBe(2);
    expectEscaped(r.stdout);
    expect(r.stdout).toContain(
      `  OS.release.PRETTY_NAME: Ubuntu 24.04 on 2 of 3 nodes; "Ubuntu ${SHOWN}" on 1: gpu-node-3\n`,
    );
    expect(rawControls(r.stderr)).toEqual([]);
  });

  test("aicr validate -t table: the table row and the readiness error show the actual value escaped", async () => {
    const r = await aicr(["validate", "-r", recipe, "-s", b, "--no-cluster", "-t", "table"], { env });
    expect(r.code).toBe(2);
    expectEscaped(r.stdout);
    expect(r.stdout).toMatch(
      /OS\.release\.PRETTY_NAME +failed +0\.000s +expected Ubuntu 24\.04, actual Ubuntu \\u001b/,
    );
    expectEscaped(r.stderr);
    expect(r.stderr).toContain(
      `OS.release.PRETTY_NAME: expected Ubuntu 24.04 (exact match), actual "Ubuntu ${SHOWN}"`,
    );
  });

  test.skipIf(!Bun.which("python3"))(
    "on a terminal: aicr's own colours still appear, the value's escape codes do not",
    async () => {
      const shown = await onTerminal(["diff", "-b", a, "--target", b]);
      expect(shown).toContain("\x1b[1mOS\x1b[0m");
      expect(shown).toContain(`\x1b[33m~ OS.release.PRETTY_NAME: Ubuntu 24.04 -> "Ubuntu ${SHOWN}"\x1b[0m`);
      expect(shown).not.toContain("\x07");
      expect(shown).not.toContain("\x1b]");
      expect(shown).not.toContain("\x1b[2J");
      expect(rawControls(shown.replace(/\r\n/g, "\n"), { colours: true })).toEqual([]);

      const fleetShown = await onTerminal(["diff", "--fleet", fleet]);
      expect(fleetShown).toContain(
        `\x1b[33mOS.release.PRETTY_NAME: Ubuntu 24.04 on 2 of 3 nodes; "Ubuntu ${SHOWN}"`,
      );
      expect(rawControls(fleetShown.replace(/\r\n/g, "\n"), { colours: true })).toEqual([]);
    },
  );
});
