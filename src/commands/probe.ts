import { readdirSync, statSync } from "node:fs";
import { delay } from "../core/async.ts";
import { AicrError, ExitStatus } from "../core/errors.ts";
import { defineAicrCommand } from "./_define.ts";

/**
 * aicr probe <verb> — internal, hidden from help: what the conformance checks' pods run in this
 * project's own image, so no other image (CUDA, busybox) is needed in an air-gapped registry.
 *
 *   aicr probe devices                the /dev/nvidia* this container sees; exit 0 with at least one GPU
 *                                     (/dev/nvidia<N>), 1 with none (a ResourceClaim's pod)
 *   aicr probe devices --expect none  exit 0 when no /dev/nvidia* is visible, 1 listing what is
 *                                     (the isolation probe: a pod without a claim)
 *   aicr probe sleep <seconds>        waits, then exits 0; SIGTERM or SIGINT ends it early, exit 0 too
 *
 * It never contacts a cluster.
 */

export const PROBE_VERBS = ["devices", "sleep"] as const;
export const EXPECT = ["some", "none"] as const;
export type Expect = (typeof EXPECT)[number];

/** The longest sleep: within one timer's reach (2^31 ms), far beyond any check's deadline. */
export const MAX_SLEEP_SECONDS = 2_000_000;

/** One /dev entry whose name starts with `nvidia`, as the probe saw it. */
export interface DeviceEntry {
  name: string;
  /** "character device 195:0", "directory", … */
  kind: string;
}

/** A GPU's own device node: /dev/nvidia<N> (nvidiactl, nvidia-uvm, nvidia-caps are not GPUs). */
export const isGpuNode = (name: string): boolean => /^nvidia\d+$/.test(name);

/** The outcome of `probe devices` (pure): what to print, and whether the expectation held. */
export function devicesOutcome(
  entries: readonly DeviceEntry[],
  expect: Expect,
): { ok: boolean; lines: string[] } {
  const sorted = [...entries].sort((a, b) => a.name.localeCompare(b.name, "en", { numeric: true }));
  const listed = sorted.map((e) => `/dev/${e.name} (${e.kind})`);
  const gpus = sorted.filter((e) => isGpuNode(e.name)).map((e) => `/dev/${e.name}`);
  if (expect === "none") {
    if (sorted.length === 0)
      return {
        ok: true,
        lines: ["no /dev/nvidia* device node is visible: this container has no GPU access"],
      };
    return {
      ok: false,
      lines: [
        ...listed,
        `${sorted.length} /dev/nvidia* entr${sorted.length === 1 ? "y is" : "ies are"} visible to a container that holds no ResourceClaim (expected none)`,
      ],
    };
  }
  if (gpus.length > 0)
    return {
      ok: true,
      lines: [
        ...listed,
        `${gpus.length} GPU device node${gpus.length === 1 ? "" : "s"} visible: ${gpus.join(", ")}`,
      ],
    };
  return {
    ok: false,
    lines: [
      ...listed,
      sorted.length === 0
        ? "no /dev/nvidia* device node is visible (expected at least one /dev/nvidia<N>)"
        : "no GPU device node /dev/nvidia<N> is visible, only the entries above (expected at least one)",
    ],
  };
}

/** `aicr probe sleep`'s argument (pure): whole or decimal seconds, 0 to MAX_SLEEP_SECONDS. */
export function parseSleepSeconds(text: string | undefined): number {
  const value = text?.trim() ?? "";
  const seconds = /^\d+(\.\d+)?$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(seconds) || seconds > MAX_SLEEP_SECONDS)
    throw new AicrError(
      "INVALID_REQUEST",
      `aicr probe sleep: ${JSON.stringify(text ?? "")} is not a number of seconds from 0 to ${MAX_SLEEP_SECONDS}`,
      { remedy: "give the seconds as a plain number, e.g. aicr probe sleep 30" },
    );
  return seconds;
}

/** Character or block device numbers from st_rdev (Linux's encoding). */
function deviceNumbers(rdev: number): string {
  const major = ((rdev >>> 8) & 0xfff) | (Math.floor(rdev / 2 ** 32) * 0x1000);
  const minor = (rdev & 0xff) | ((rdev >>> 12) & 0xfff00);
  return `${major}:${minor}`;
}

/** The /dev entries named nvidia* this process sees (none when /dev cannot be read). */
export function readNvidiaEntries(dev = "/dev"): DeviceEntry[] {
  let names: string[];
  try {
    names = readdirSync(dev);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.startsWith("nvidia"))
    .map((name) => {
      try {
        const st = statSync(`${dev}/${name}`);
        const kind = st.isCharacterDevice()
          ? `character device ${deviceNumbers(st.rdev)}`
          : st.isBlockDevice()
            ? `block device ${deviceNumbers(st.rdev)}`
            : st.isDirectory()
              ? "directory"
              : "file";
        return { name, kind };
      } catch {
        return { name, kind: "unreadable" };
      }
    });
}

export default defineAicrCommand({
  name: "probe",
  announceRun: false,
  cluster: false,
  transport: "offline",
  args: {
    verb: { type: "positional", description: "devices | sleep", valueHint: "verb" },
    seconds: {
      type: "positional",
      description: "sleep: how long, in seconds",
      valueHint: "seconds",
      required: false,
    },
    expect: {
      type: "enum",
      options: EXPECT,
      default: "some",
      description: "devices: some (at least one /dev/nvidia<N>) or none (no /dev/nvidia* at all)",
    },
  },
  async run(ctx, flags) {
    const verb = flags.string("verb");
    if (verb === "devices") {
      if (flags.string("seconds") !== undefined)
        throw new AicrError("INVALID_REQUEST", "aicr probe devices takes no argument", {
          remedy: "run aicr probe devices [--expect some|none]",
        });
      const expect = flags.string("expect") ?? "some";
      if (expect !== "some" && expect !== "none")
        throw new AicrError(
          "INVALID_REQUEST",
          `invalid --expect ${JSON.stringify(expect)}: expected some or none`,
          {
            remedy: "pass --expect none for the isolation probe, or omit it",
          },
        );
      const outcome = devicesOutcome(readNvidiaEntries(), expect);
      for (const line of outcome.lines) process.stdout.write(`${line}\n`);
      if (!outcome.ok) throw new ExitStatus(1, `probe failed: ${outcome.lines.at(-1)}`);
      return;
    }
    if (verb === "sleep") {
      if (flags.given("expect"))
        throw new AicrError("INVALID_REQUEST", "--expect belongs to aicr probe devices, not sleep", {
          remedy: "run aicr probe sleep <seconds>",
        });
      const seconds = parseSleepSeconds(flags.string("seconds"));
      const started = Date.now();
      try {
        await delay(seconds * 1000, ctx.signal);
      } catch {
        // SIGTERM (the pod deleted) or SIGINT: a stopped sleeper is a good one.
        throw new ExitStatus(0, `sleep stopped after ${((Date.now() - started) / 1000).toFixed(1)} s`);
      }
      return;
    }
    throw new AicrError("INVALID_REQUEST", `unknown probe ${JSON.stringify(verb ?? "")}`, {
      remedy: `use one of: ${PROBE_VERBS.join(", ")}`,
    });
  },
});
