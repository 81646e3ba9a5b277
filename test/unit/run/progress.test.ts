import { describe, expect, test } from "bun:test";
import { createLogger } from "../../../src/core/log.ts";
import { describePodState, type PodState } from "../../../src/deployer/wait.ts";
import {
  createProgress,
  formatPhase,
  formatQuiet,
  formatSpan,
  formatWaiting,
  PROGRESS_INTERVAL_MS,
  progressIntervalMs,
} from "../../../src/run/progress.ts";
import { until } from "../../support/until.ts";

const STUCK_MS = 5_000;

function sink() {
  const lines: string[] = [];
  return { lines, log: createLogger({ write: (l) => lines.push(l), color: false }) };
}

/**
 * What proves a stopped wait silent, without sleeping: a second progress with the same interval,
 * started after the stop, speaks twice. A timer the first still held was armed earlier with that
 * interval, so it would have fired before the witness's first line.
 */
async function witnessTicks(intervalMs: number): Promise<void> {
  const { lines, log } = sink();
  using witness = createProgress({ log, remainingMs: () => 1_000, intervalMs });
  witness.wait("the witness");
  await until(() => lines.length >= 2 || undefined, "two lines of a wait begun after the stop", STUCK_MS);
}

describe("progress formatting", () => {
  test("a phase line has its step's time and the run's", () => {
    expect(formatPhase("pod p running on gpu-node-1", 400, 1234)).toBe(
      "pod p running on gpu-node-1 (0.4s; 1.2s in all)",
    );
  });

  test("spans are written as --timeout is; time left rounds up, never to zero", () => {
    expect(formatSpan(280_000)).toBe("4m40s");
    expect(formatSpan(2_400)).toBe("2s");
    expect(formatSpan(2_400, true)).toBe("3s");
    expect(formatSpan(0, true)).toBe("1s");
  });

  test("a waiting line says what the run waits for, what it last saw and the time left", () => {
    expect(
      formatWaiting({
        what: "waiting for the agent pod to start",
        saw: "pod p is Pending, container waiting: ContainerCreating",
        leftMs: 280_000,
      }),
    ).toBe(
      "waiting for the agent pod to start: pod p is Pending, container waiting: ContainerCreating; 4m40s left",
    );
    expect(formatWaiting({ what: "checking permissions", leftMs: 3_000 })).toBe(
      "checking permissions; 3s left",
    );
    expect(formatQuiet({ what: "agent in pod p running", quietMs: 10_000, leftMs: 280_000 })).toBe(
      "agent in pod p running, quiet for 10s; 4m40s left",
    );
  });

  test("a pod's state: phase, waiting reason, container state", () => {
    const pod = (status: object): PodState => ({ metadata: { name: "p" }, status }) as PodState;
    expect(
      describePodState(
        pod({
          phase: "Pending",
          containerStatuses: [{ state: { waiting: { reason: "ContainerCreating" } } }],
        }),
      ),
    ).toBe("pod p is Pending, container waiting: ContainerCreating");
    expect(describePodState(pod({ phase: "Running", containerStatuses: [{ state: { running: {} } }] }))).toBe(
      "pod p is Running, container running",
    );
    expect(describePodState(pod({ phase: "Pending" }))).toBe("pod p is Pending");
    expect(describePodState(undefined)).toBe("no pod of this run's Job was seen");
  });

  test("the interval: AICR_PROGRESS_INTERVAL_MS when positive, else 10 s", () => {
    expect(progressIntervalMs({})).toBe(PROGRESS_INTERVAL_MS);
    expect(progressIntervalMs({ AICR_PROGRESS_INTERVAL_MS: "250" })).toBe(250);
    expect(progressIntervalMs({ AICR_PROGRESS_INTERVAL_MS: "0" })).toBe(PROGRESS_INTERVAL_MS);
    expect(progressIntervalMs({ AICR_PROGRESS_INTERVAL_MS: "soon" })).toBe(PROGRESS_INTERVAL_MS);
  });
});

describe("progress while waiting", () => {
  test(
    "without a terminal: waiting lines are log lines, until the next phase",
    async () => {
      const { lines, log } = sink();
      using progress = createProgress({ log, remainingMs: () => 42_000, intervalMs: 20 });
      progress.wait("waiting for the agent pod to start", { saw: () => "pod p is Pending" });
      await until(
        () => lines.filter((l) => l.startsWith("waiting for")).length >= 2 || undefined,
        "two waiting lines",
        STUCK_MS,
      );
      expect(lines[0]).toBe("waiting for the agent pod to start: pod p is Pending; 42s left\n");
      progress.phase("pod p running on n");
      const count = lines.length;
      await witnessTicks(20);
      expect(lines.length).toBe(count); // the phase ended the wait
      expect(lines.at(-1)).toMatch(/^pod p running on n \([0-9.]+s; [0-9.]+s in all\)\n$/);
      expect(lines.join("")).not.toContain("\x1b");
    },
    STUCK_MS + 1_000,
  );

  test(
    "a quiet wait speaks only after a silence",
    async () => {
      const { lines, log } = sink();
      using progress = createProgress({ log, remainingMs: () => 5_000, intervalMs: 50 });
      progress.wait("agent in pod p running", { quiet: true });
      await until(() => lines.find((l) => l.includes("quiet for")), "a quiet line", STUCK_MS);
      expect(lines[0]).toMatch(/^agent in pod p running, quiet for 1s; 5s left\n$/);
    },
    STUCK_MS + 1_000,
  );

  test(
    "on a terminal: one updating line, erased before a log line and at the end",
    async () => {
      const { lines, log } = sink();
      const status: string[] = [];
      const progress = createProgress({
        log,
        remainingMs: () => 3_000,
        intervalMs: 20,
        status: (c) => status.push(c),
      });
      progress.wait("checking permissions");
      await until(() => status.length >= 2 || undefined, "two status updates", STUCK_MS);
      expect(status[0]).toBe("\r\x1b[Kchecking permissions; 3s left");
      expect(lines).toHaveLength(0); // nothing logged: the status line replaces itself
      const before = status.length;
      progress.log.warn("something");
      expect(status[before]).toBe("\r\x1b[K");
      expect(lines.at(-1)).toBe("WARN something\n");
      progress[Symbol.dispose]();
      const after = status.length;
      await witnessTicks(20);
      expect(status.length).toBe(after); // no timer left
    },
    STUCK_MS + 1_000,
  );
});
