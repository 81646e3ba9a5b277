/**
 * The other side of a D-Bus connection, scripted by a test: a unix socket server (`serve`) and a peer
 * that accepts SASL EXTERNAL and answers each method call through a function (`peer`). For the error
 * paths only — the real thing is test/support/real-systemd.ts.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  type DbusMessage,
  decodeMessage,
  encodeMessage,
  frameLength,
  MessageType,
} from "../../../src/collect/_dbus-message.ts";

export const GUID = "0123456789abcdef0123456789abcdef";

export interface Served {
  /** The socket's path. */
  path: string;
  close(): void;
}

/** A unix socket server at `at` (created with its parents) or in a new temp dir; `onConn` scripts it. */
export async function serve(onConn: (s: Socket) => void, at?: string): Promise<Served> {
  const dir = at ? undefined : mkdtempSync(join(tmpdir(), "aicr-dbus-"));
  const path = at ?? join(dir as string, "bus");
  mkdirSync(dirname(path), { recursive: true });
  const sockets: Socket[] = [];
  const server = createServer((s) => {
    sockets.push(s);
    s.on("error", () => {});
    onConn(s);
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return {
    path,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type Answer = (call: DbusMessage, reply: (m: Partial<DbusMessage>) => void) => void;

/** A peer that accepts EXTERNAL and answers each call through `answer`; what it saw goes to `seen`. */
export function peer(answer: Answer, seen: string[] = []): (s: Socket) => void {
  return (s) => {
    let buf = Buffer.alloc(0);
    let authed = false;
    let serial = 100;
    const reply = (call: DbusMessage) => (m: Partial<DbusMessage>) => {
      const base = { type: MessageType.MethodReturn, flags: 0, serial: ++serial, replySerial: call.serial };
      s.write(encodeMessage({ ...base, signature: "", body: [], ...m } as DbusMessage));
    };
    s.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (!authed) {
        const end = buf.indexOf("\r\n");
        if (end < 0) return;
        seen.push(JSON.stringify(buf.subarray(0, end).toString("latin1")));
        buf = buf.subarray(end + 2);
        s.write(`OK ${GUID}\r\n`);
        authed = true;
      }
      if (buf.subarray(0, 7).toString() === "BEGIN\r\n") {
        seen.push("BEGIN");
        buf = buf.subarray(7);
      }
      for (let n = frameLength(buf); n !== undefined && buf.length >= n; n = frameLength(buf)) {
        const call = decodeMessage(buf.subarray(0, n));
        buf = buf.subarray(n);
        const args = JSON.stringify(call.body);
        seen.push(`${call.destination ?? "-"} ${call.path} ${call.interface}.${call.member}(${args})`);
        answer(call, reply(call));
      }
    });
  };
}
