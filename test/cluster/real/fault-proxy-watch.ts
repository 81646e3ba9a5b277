/**
 * Watch streams through the fault proxy: counting the events of a passing watch response (to cut it
 * after N, as the fake's watch-http.ts does) and the apiserver's answer to a watch resumed from a
 * resourceVersion it no longer has.
 */
import { expired } from "../errors.ts";
import type { FaultEffect } from "../faults.ts";
import type { RequestInfo } from "../request-info.ts";

/** As the fake's pipeline: watch faults count only watches; the resume fault only watches with a resourceVersion. */
export function faultApplies(f: FaultEffect, info: RequestInfo, url: URL): boolean {
  const watchOnly = f.cutWatchAfterEvents !== undefined || f.watchGoneOnResume;
  if (watchOnly && info.verb !== "watch") return false;
  const rv = url.searchParams.get("resourceVersion");
  if (f.watchGoneOnResume && (!rv || rv === "0")) return false;
  return true;
}

/**
 * The one ERROR event kube-apiserver sends (in a 200 response) to a watch from a compacted
 * resourceVersion. The real message ends with the oldest resourceVersion it still has; the proxy does
 * not know it and repeats the requested one.
 */
export function goneEventLine(resourceVersion: string): string {
  const status = expired(`too old resource version: ${resourceVersion} (${resourceVersion})`).status;
  return `${JSON.stringify({ type: "ERROR", object: status })}\n`;
}

const BOOKMARK_JSON = /^\s*\{\s*"type"\s*:\s*"BOOKMARK"/;
const BOOKMARK_PROTO = Buffer.from([0x0a, 0x08, ...Buffer.from("BOOKMARK")]);
const HEAD_BYTES = 64;

/**
 * Counts the events of a watch body as it streams. JSON (`application/json`): one event per complete
 * line. Protobuf (`application/vnd.kubernetes.protobuf;stream=watch`): one per length-prefixed frame.
 * BOOKMARKs are not counted, as the fake counts them. `feed` returns how many bytes of the chunk
 * complete the `limit`-th event, or -1 while fewer have passed.
 */
export class EventCounter {
  count = 0;
  private head: Buffer[] = [];
  private headLength = 0;
  /** Protobuf: bytes of the current frame's length prefix, then of its payload still to come. */
  private prefix: number[] = [];
  private remaining = -1;

  private constructor(
    private readonly limit: number,
    private readonly framing: "lines" | "frames",
  ) {}

  /** A counter for this content type, or undefined for an encoding it cannot frame (CBOR, …). */
  static for(contentType: string | undefined, limit: number): EventCounter | undefined {
    const type = (contentType ?? "application/json").split(";")[0]!.trim().toLowerCase();
    if (type === "application/json") return new EventCounter(limit, "lines");
    if (type === "application/vnd.kubernetes.protobuf") return new EventCounter(limit, "frames");
    return undefined;
  }

  feed(chunk: Buffer): number {
    return this.framing === "lines" ? this.feedLines(chunk) : this.feedFrames(chunk);
  }

  private keepHead(part: Buffer): void {
    if (this.headLength >= HEAD_BYTES || part.length === 0) return;
    const take = part.subarray(0, HEAD_BYTES - this.headLength);
    this.head.push(take);
    this.headLength += take.length;
  }

  private takeHead(): Buffer {
    const head = Buffer.concat(this.head);
    this.head = [];
    this.headLength = 0;
    return head;
  }

  /** Counts one finished event; true when it is the limit-th. */
  private event(isBookmark: boolean): boolean {
    if (isBookmark) return false;
    this.count++;
    return this.count >= this.limit;
  }

  private feedLines(chunk: Buffer): number {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0) {
        this.keepHead(chunk.subarray(start));
        return -1;
      }
      this.keepHead(chunk.subarray(start, nl));
      const head = this.takeHead().toString("utf8");
      start = nl + 1;
      if (head.trim() === "") continue;
      if (this.event(BOOKMARK_JSON.test(head))) return start;
    }
  }

  private feedFrames(chunk: Buffer): number {
    let i = 0;
    while (i < chunk.length) {
      if (this.remaining < 0) {
        this.prefix.push(chunk[i++]!);
        if (this.prefix.length < 4) continue;
        this.remaining = Buffer.from(this.prefix).readUInt32BE(0);
        this.prefix = [];
      }
      const take = Math.min(this.remaining, chunk.length - i);
      this.keepHead(chunk.subarray(i, i + take));
      i += take;
      this.remaining -= take;
      if (this.remaining > 0) continue;
      this.remaining = -1;
      const head = this.takeHead();
      if (this.event(head.subarray(0, BOOKMARK_PROTO.length).equals(BOOKMARK_PROTO))) return i;
    }
    return -1;
  }
}
