/** The interactive confirmation: only on a terminal, asked on stderr so stdout stays data. */
import { createInterface } from "node:readline";

/** Both ends a person would use are terminals (stdin to answer, stderr to see the question). */
export function isInteractive(): boolean {
  return Boolean(process.stdin.isTTY && process.stderr.isTTY);
}

/** Asks `question`; true only for "y" or "yes". A cancel (Ctrl-C) or closed input reads as no. */
export function askYesNo(question: string, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    let settled = false;
    const finish = (yes: boolean): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      rl.close();
      resolve(yes);
    };
    const onAbort = (): void => finish(false);
    signal.addEventListener("abort", onAbort, { once: true });
    rl.on("close", () => finish(false));
    rl.question(question, (answer) => finish(/^y(es)?$/i.test(answer.trim())));
  });
}
