/** The agent pod's log relayed through our logger: prefix, level, fields, the kept tail, escaping. */
import { describe, expect, test } from "bun:test";
import { createLogger } from "../../../src/core/log.ts";
import { agentLogRelay } from "../../../src/remote/_agent-log.ts";
import { rawControls } from "../../support/raw-controls.ts";

const ATTACK = "\x1b]0;pwned\x07\x1b[2J";
const SHOWN = "\\u001b]0;pwned\\u0007\\u001b[2J";

async function relay(text: string): Promise<{ lines: string; tail: string[] }> {
  const out: string[] = [];
  const log = createLogger({ color: false, write: (l) => out.push(l) });
  const r = agentLogRelay(log);
  await new Promise<void>((resolve, reject) =>
    r.out.end(text, (err?: Error | null) => (err ? reject(err) : resolve())),
  );
  return { lines: out.join(""), tail: r.lastLines() };
}

describe("agentLogRelay", () => {
  test("JSON lines: [agent] and the message at their level, fields as key=value; other lines as info", async () => {
    const { lines, tail } = await relay(
      `${JSON.stringify({ level: "warn", msg: "slow", time: "t", step: 3 })}\nplain text\n\n`,
    );
    expect(lines).toBe("WARN [agent] slow step=3\n[agent] plain text\n");
    expect(tail).toEqual([JSON.stringify({ level: "warn", msg: "slow", time: "t", step: 3 }), "plain text"]);
  });

  test("the agent's escape codes (message, fields, plain lines, the kept tail) are shown escaped", async () => {
    const json = JSON.stringify({
      level: "info",
      msg: `read ${ATTACK}\nsecond`,
      node: `n\u202e`,
      deep: { v: ATTACK },
    });
    const { lines, tail } = await relay(`${json}\nraw ${ATTACK}\u009b\n`);
    expect(rawControls(lines)).toEqual([]);
    // A message keeps its own line breaks.
    expect(lines).toContain(`[agent] read ${SHOWN}\nsecond`);
    expect(lines).toContain("node=n\\u202e");
    expect(lines).toContain(`[agent] raw ${SHOWN}\\u009b\n`);
    expect(rawControls(tail.join("\n"))).toEqual([]);
    expect(tail[1]).toBe(`raw ${SHOWN}\\u009b`);
  });
});
