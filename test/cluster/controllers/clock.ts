/** Time source for controllers: real by default, a manually advanced one for deterministic tests. */

export interface Clock {
  now(): Date;
  /** Runs fn after ms; returns a cancel function. */
  setTimeout(fn: () => void, ms: number): () => void;
}

export const realClock: Clock = {
  now: () => new Date(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, Math.max(0, ms));
    return () => clearTimeout(t);
  },
};

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

/** A clock that only moves when told to; due timers fire in order during advance(). */
export class FakeClock implements Clock {
  private ms: number;
  private seq = 0;
  private timers: Timer[] = [];

  constructor(start = Date.parse("2026-01-01T00:00:00Z")) {
    this.ms = start;
  }

  now(): Date {
    return new Date(this.ms);
  }

  setTimeout(fn: () => void, ms: number): () => void {
    const t: Timer = { at: this.ms + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(t);
    return () => {
      this.timers = this.timers.filter((x) => x !== t);
    };
  }

  /** Number of timers waiting to fire. */
  get pending(): number {
    return this.timers.length;
  }

  advance(ms: number): void {
    const target = this.ms + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers[0];
      if (!next || next.at > target) break;
      this.timers.shift();
      this.ms = next.at;
      next.fn();
    }
    this.ms = target;
  }
}

/** RFC 3339 at second precision, as metav1.Time serialises. */
export function rfc3339(d: Date): string {
  return `${d.toISOString().slice(0, 19)}Z`;
}
