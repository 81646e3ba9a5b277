/**
 * A minimal D-Bus client over a unix socket: SASL EXTERNAL, then method calls matched to their
 * replies by serial. Enough for asking systemd questions, nothing more (no signals, no fds, no
 * server side). On systemd's private socket there is no bus daemon: no Hello, no destination needed;
 * on a bus socket (`bus: true`) Hello comes first. Every wait is bounded (connect + auth, each call)
 * and ends at once when the caller's signal aborts; a message over the size cap closes the connection.
 */
import { connect, type Socket } from "node:net";
import { runWithTimeout } from "../core/async.ts";
import { authRequest, parseAuthReply, takeAuthLine } from "./_dbus-auth.ts";
import {
  type DbusMessage,
  DEFAULT_MAX_MESSAGE_BYTES,
  decodeMessage,
  encodeMessage,
  frameLength,
  MessageType,
} from "./_dbus-message.ts";
import type { DbusValue } from "./_dbus-signature.ts";

/** An error reply: its D-Bus error name (org.freedesktop.DBus.Error.*, org.freedesktop.systemd1.*) and text. */
export class DbusError extends Error {
  override readonly name = "DbusError";
  constructor(
    readonly errorName: string,
    readonly text: string,
  ) {
    super(text ? `${errorName}: ${text}` : errorName);
  }
}

export interface DbusConnectOptions {
  /** The unix socket's path. */
  path: string;
  /** Who we are (SASL EXTERNAL); the server checks it against the socket's peer credentials. */
  uid: number;
  signal: AbortSignal;
  /** Connect, authenticate and (on a bus) Hello, together. */
  timeoutMs: number;
  /** A bus daemon's socket: say Hello before anything else. */
  bus?: boolean | undefined;
  maxMessageBytes?: number | undefined;
}

export interface DbusCall {
  destination?: string | undefined;
  path: string;
  interface: string;
  member: string;
  signature?: string | undefined;
  body?: DbusValue[] | undefined;
}

interface Waiter {
  resolve: (m: DbusMessage) => void;
  reject: (e: unknown) => void;
}

const concat = (parts: Uint8Array[]): Uint8Array => (parts.length === 1 ? parts[0]! : Buffer.concat(parts));

export class DbusConnection {
  private serial = 0;
  private readonly waiting = new Map<number, Waiter>();
  private authWaiter: { resolve: () => void; reject: (e: unknown) => void } | undefined;
  private authed = false;
  private chunks: Uint8Array[] = [];
  private size = 0;
  private need = 16;
  private failure: Error | undefined;

  private constructor(
    private readonly socket: Socket,
    private readonly maxBytes: number,
  ) {
    socket.on("data", (chunk: Uint8Array) => this.onData(chunk));
    socket.on("error", (err) => this.fail(err));
    socket.on("close", () => this.fail(new Error("the connection was closed by the other side")));
  }

  static async open(o: DbusConnectOptions): Promise<DbusConnection> {
    const conn = new DbusConnection(
      connect({ path: o.path }),
      o.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    );
    try {
      await runWithTimeout(
        async (signal) => {
          await conn.authenticate(o.uid, signal);
          if (o.bus) {
            const hello = { destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus" };
            await conn.call({ ...hello, interface: "org.freedesktop.DBus", member: "Hello" }, { signal });
          }
        },
        {
          ms: o.timeoutMs,
          onTimeout: () => new Error(`no D-Bus answer within ${o.timeoutMs} ms (connect and authenticate)`),
          signal: o.signal,
        },
      );
    } catch (err) {
      conn.close();
      throw err;
    }
    return conn;
  }

  private authenticate(uid: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      const onAbort = (): void => settle(() => reject(signal.reason));
      const settle = (then: () => void): void => {
        signal.removeEventListener("abort", onAbort);
        this.authWaiter = undefined;
        then();
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.authWaiter = { resolve: () => settle(resolve), reject: (e) => settle(() => reject(e)) };
      this.socket.write(authRequest(uid));
    });
  }

  /** Sends one method call and waits for its reply; an error reply rejects with DbusError. */
  async call(c: DbusCall, o: { signal: AbortSignal; timeoutMs?: number }): Promise<DbusMessage> {
    if (this.failure) throw this.failure;
    o.signal.throwIfAborted();
    const serial = ++this.serial;
    const bytes = encodeMessage({
      type: MessageType.MethodCall,
      flags: 0,
      serial,
      ...c,
      signature: c.signature ?? "",
      body: c.body ?? [],
    });
    return new Promise<DbusMessage>((resolve, reject) => {
      const timer =
        o.timeoutMs === undefined
          ? undefined
          : setTimeout(
              () => done(() => reject(new Error(`no reply to ${c.member} within ${o.timeoutMs} ms`))),
              o.timeoutMs,
            );
      const onAbort = (): void => done(() => reject(o.signal.reason));
      const done = (settle: () => void): void => {
        clearTimeout(timer);
        o.signal.removeEventListener("abort", onAbort);
        this.waiting.delete(serial);
        settle();
      };
      o.signal.addEventListener("abort", onAbort, { once: true });
      this.waiting.set(serial, {
        resolve: (m) => done(() => resolve(m)),
        reject: (e) => done(() => reject(e)),
      });
      this.socket.write(bytes);
    });
  }

  close(): void {
    this.fail(new Error("the connection was closed"));
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    this.socket.destroy();
    this.authWaiter?.reject(err);
    for (const w of [...this.waiting.values()]) w.reject(err);
  }

  private onData(chunk: Uint8Array): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    try {
      if (!this.authed && !this.readAuthReply()) return;
      while (this.size >= this.need && !this.failure) {
        const buffered = concat(this.chunks);
        const total = frameLength(buffered, this.maxBytes);
        if (total === undefined) return;
        this.need = total;
        if (buffered.length < total) {
          this.chunks = [buffered];
          return;
        }
        this.chunks = buffered.length > total ? [buffered.subarray(total)] : [];
        this.size = buffered.length - total;
        this.need = 16;
        this.dispatch(decodeMessage(buffered.subarray(0, total)));
      }
    } catch (err) {
      this.fail(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** True once authenticated; the bytes after the OK line stay buffered as messages. */
  private readAuthReply(): boolean {
    const taken = takeAuthLine(concat(this.chunks));
    if (!taken) return false;
    const reply = parseAuthReply(taken.line);
    if (!reply.ok) throw new Error(reply.reason);
    this.authed = true;
    this.chunks = taken.rest.length ? [taken.rest] : [];
    this.size = taken.rest.length;
    this.authWaiter?.resolve();
    return true;
  }

  private dispatch(msg: DbusMessage): void {
    if (msg.type !== MessageType.MethodReturn && msg.type !== MessageType.Error) return; // signals: not ours
    const waiter = msg.replySerial === undefined ? undefined : this.waiting.get(msg.replySerial);
    if (!waiter) return;
    if (msg.type === MessageType.Error) {
      const text = typeof msg.body[0] === "string" ? msg.body[0] : "";
      waiter.reject(new DbusError(msg.errorName ?? "org.freedesktop.DBus.Error.Failed", text));
    } else waiter.resolve(msg);
  }
}
