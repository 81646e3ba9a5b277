/**
 * Another commit's dist/aicr, for benchmarks that compare it with this tree's, interleaved: built in a
 * throw-away worktree that shares this tree's node_modules. `using` removes the worktree.
 */
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dir, "../..");

async function run(cmd: string[], cwd: string): Promise<void> {
  const p = Bun.spawn(cmd, { cwd, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  if (code !== 0) throw new Error(`${cmd.join(" ")} failed (${code}): ${err || out}`);
}

export interface RevisionBuild extends Disposable {
  rev: string;
  /** The revision's compiled binary. */
  binary: string;
}

/** <rev>'s dist/aicr, built in a worktree of its own. */
export async function buildRevision(rev: string): Promise<RevisionBuild> {
  const dir = join(mkdtempSync(join(tmpdir(), "aicr-bench-rev-")), "tree");
  const dispose = () => {
    Bun.spawnSync(["git", "worktree", "remove", "--force", dir], { cwd: root });
    rmSync(join(dir, ".."), { recursive: true, force: true });
  };
  try {
    await run(["git", "worktree", "add", "--detach", dir, rev], root);
    symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
    await run([process.execPath, "scripts/build.ts"], dir);
  } catch (err) {
    dispose();
    throw err;
  }
  return { rev, binary: join(dir, "dist/aicr"), [Symbol.dispose]: dispose };
}
