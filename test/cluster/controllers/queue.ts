/** A keyed work queue: deduplicated, one reconcile at a time, failures retried with exponential backoff. */
import type { Clock } from "./clock.ts";

export interface Backoff {
  initialMs: number;
  maxMs: number;
}

export function backoffDelay(b: Backoff, attempt: number): number {
  return Math.min(b.maxMs, b.initialMs * 2 ** Math.max(0, attempt));
}

/** A reconcile may ask to run again after a delay (deadlines, TTLs, pod backoff). */
export type Reconcile = (key: string) => undefined | number | Promise<undefined | number>;

export class WorkQueue {
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, () => void>();
  private running = false;
  private stopped = false;
  private idle: Promise<void> = Promise.resolve();

  constructor(
    private readonly clock: Clock,
    private readonly reconcile: Reconcile,
    private readonly backoff: Backoff,
    private readonly onError: (key: string, err: unknown) => void = () => {},
  ) {}

  add(key: string): void {
    if (this.stopped) return;
    this.dirty.add(key);
    if (!this.running) this.idle = this.drain();
  }

  /** Schedules key after ms; an earlier pending schedule for the same key is kept if sooner. */
  addAfter(key: string, ms: number): void {
    if (this.stopped) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    this.timers.get(key)?.();
    const cancel = this.clock.setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    this.timers.set(key, cancel);
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.dirty.size > 0 && !this.stopped) {
        const key = this.dirty.values().next().value as string;
        this.dirty.delete(key);
        // Delays count from when the reconcile started, so time that passed meanwhile is not added twice.
        const started = this.clock.now().getTime();
        try {
          const again = await this.reconcile(key);
          this.failures.delete(key);
          if (typeof again === "number") this.addAfter(key, started + again - this.clock.now().getTime());
        } catch (err) {
          const n = this.failures.get(key) ?? 0;
          this.failures.set(key, n + 1);
          this.onError(key, err);
          this.addAfter(key, backoffDelay(this.backoff, n));
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** Resolves when the keys queued so far have been reconciled. */
  whenIdle(): Promise<void> {
    return this.idle;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
    await this.idle;
  }
}
