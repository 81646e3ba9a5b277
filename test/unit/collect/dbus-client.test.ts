import { afterEach, describe, expect, test } from "bun:test";
import type { Socket } from "node:net";
import { authRequest, parseAuthReply } from "../../../src/collect/_dbus-auth.ts";
import { DbusConnection, DbusError } from "../../../src/collect/_dbus-client.ts";
import { decodeMessage, encodeMessage, MessageType } from "../../../src/collect/_dbus-message.ts";
import { rejection } from "../../support/reject.ts";
import { GUID, peer, type Served, serve as serveAt } from "./_dbus-peer.ts";

const servers: Served[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});
const serve = async (onConn: (s: Socket) => void): Promise<string> => {
  const served = await serveAt(onConn);
  servers.push(served);
  return served.path;
};

const open = (path: string, extra: Partial<Parameters<typeof DbusConnection.open>[0]> = {}) =>
  DbusConnection.open({ path, uid: 0, signal: new AbortController().signal, timeoutMs: 2_000, ...extra });
const PING = { path: "/org/freedesktop/systemd1", interface: "org.freedesktop.DBus.Peer", member: "Ping" };
const never = new AbortController().signal;
const failure = (p: Promise<unknown>): Promise<Error> => rejection(p, Error);

describe("SASL EXTERNAL (pure)", () => {
  test("one write: a NUL, AUTH EXTERNAL with the uid as hex of its decimal digits, BEGIN", () => {
    expect(authRequest(0)).toBe("\0AUTH EXTERNAL 30\r\nBEGIN\r\n");
    expect(authRequest(1000)).toBe("\0AUTH EXTERNAL 31303030\r\nBEGIN\r\n");
  });

  test("replies: OK with a guid, REJECTED, ERROR, anything else", () => {
    expect(parseAuthReply(`OK ${GUID}`)).toEqual({ ok: true, guid: GUID });
    expect(parseAuthReply("REJECTED EXTERNAL")).toEqual({
      ok: false,
      reason: "authentication rejected (the server offers: EXTERNAL)",
    });
    expect(parseAuthReply("ERROR")).toEqual({ ok: false, reason: "authentication error" });
    expect(parseAuthReply("OK not-a-guid").ok).toBe(false);
    expect(parseAuthReply("SSH-2.0-OpenSSH_9.2")).toEqual({
      ok: false,
      reason: 'not a D-Bus authentication reply: "SSH-2.0-OpenSSH_9.2"',
    });
  });
});

describe("DbusConnection against a scripted peer", () => {
  test("authenticates, calls, and matches replies to calls by serial (answered out of order)", async () => {
    const seen: string[] = [];
    const held: (() => void)[] = [];
    const path = await serve(
      peer((call, reply) => {
        held.push(() => reply({ signature: "s", body: [`pong ${call.body[0]}`] }));
        if (held.length === 2) for (const r of held.reverse()) r();
      }, seen),
    );
    const conn = await open(path);
    const [a, b] = await Promise.all([
      conn.call({ ...PING, signature: "s", body: ["a"] }, { signal: never }),
      conn.call({ ...PING, signature: "s", body: ["b"] }, { signal: never }),
    ]);
    conn.close();
    expect([a.body[0], b.body[0]]).toEqual(["pong a", "pong b"]);
    expect(seen.slice(0, 2)).toEqual(['"\\u0000AUTH EXTERNAL 30"', "BEGIN"]);
  });

  test("a reply arriving one byte at a time", async () => {
    // A peer of its own that drips its reply.
    const drip = await serve((s) => {
      let authed = false;
      s.on("data", (chunk: Buffer) => {
        if (!authed) {
          authed = true;
          s.write(`OK ${GUID}\r\n`);
          return;
        }
        const text = chunk.toString("latin1");
        if (text === "BEGIN\r\n") return;
        const body = text.startsWith("BEGIN\r\n") ? chunk.subarray(7) : chunk;
        const call = decodeMessage(body);
        const bytes = encodeMessage({
          type: MessageType.MethodReturn,
          flags: 0,
          serial: 1,
          replySerial: call.serial,
          signature: "a{sv}",
          body: [[["MainPID", { signature: "u", value: 42 }]]],
        });
        let i = 0;
        const next = () => {
          if (i < bytes.length) s.write(bytes.subarray(i, ++i), next);
        };
        next();
      });
    });
    const conn = await open(drip);
    const reply = await conn.call(PING, { signal: never, timeoutMs: 10_000 });
    conn.close();
    expect(reply.body).toEqual([[["MainPID", { signature: "u", value: 42 }]]]);
  });

  test("on a bus, Hello goes first, to org.freedesktop.DBus", async () => {
    const seen: string[] = [];
    const path = await serve(peer((_call, reply) => reply({ signature: "s", body: [":1.1"] }), seen));
    (await open(path, { bus: true })).close();
    expect(seen[2]).toBe("org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.Hello([])");
  });

  test("an error reply rejects with DbusError: its name and text", async () => {
    const path = await serve(
      peer((_call, reply) =>
        reply({
          type: MessageType.Error,
          errorName: "org.freedesktop.systemd1.NoSuchUnit",
          signature: "s",
          body: ["Unit x.service not loaded."],
        }),
      ),
    );
    const conn = await open(path);
    const err = await failure(conn.call(PING, { signal: never }));
    conn.close();
    expect(err).toBeInstanceOf(DbusError);
    expect((err as DbusError).errorName).toBe("org.freedesktop.systemd1.NoSuchUnit");
    expect((err as DbusError).message).toBe(
      "org.freedesktop.systemd1.NoSuchUnit: Unit x.service not loaded.",
    );
  });
});

describe("DbusConnection failures", () => {
  test("no socket: the connect error, naming the path", async () => {
    const err = await failure(open("/nonexistent/aicr/private"));
    expect(String(err)).toContain("ENOENT");
    expect(String(err)).toContain("/nonexistent/aicr/private");
  });

  test("REJECTED, ERROR and garbage during authentication", async () => {
    for (const [line, why] of [
      [
        "REJECTED EXTERNAL DBUS_COOKIE_SHA1",
        /authentication rejected \(the server offers: EXTERNAL DBUS_COOKIE_SHA1\)/,
      ],
      ['ERROR "bad"', /authentication error: "bad"/],
      ["HTTP/1.1 400 Bad Request", /not a D-Bus authentication reply: "HTTP\/1.1 400 Bad Request"/],
    ] as const) {
      const path = await serve((s) => s.once("data", () => s.write(`${line}\r\n`)));
      expect(String(await failure(open(path)))).toMatch(why);
    }
  });

  test("endless bytes without a line end during authentication", async () => {
    const path = await serve((s) => s.once("data", () => s.write(Buffer.alloc(20_000, 0x41))));
    expect(String(await failure(open(path)))).toContain("without a line end");
  });

  test("a peer that never answers: bounded by the timeout", async () => {
    const path = await serve(() => {});
    const err = await failure(open(path, { timeoutMs: 100 }));
    expect(String(err)).toContain("no D-Bus answer within 100 ms");
  });

  test("the peer closing before it answers", async () => {
    const path = await serve((s) => s.once("data", () => s.end()));
    expect(String(await failure(open(path)))).toContain("closed by the other side");
  });

  test("cancelling the signal ends the wait with its reason, during open and during a call", async () => {
    const silent = await serve(() => {});
    const c1 = new AbortController();
    const opening = failure(open(silent, { signal: c1.signal, timeoutMs: 60_000 }));
    c1.abort(new Error("cancelled by the test"));
    expect(String(await opening)).toContain("cancelled by the test");

    const mute = await serve(peer(() => {}));
    const conn = await open(mute);
    const c2 = new AbortController();
    const calling = failure(conn.call(PING, { signal: c2.signal, timeoutMs: 60_000 }));
    c2.abort(new Error("cancelled mid-call"));
    expect(String(await calling)).toContain("cancelled mid-call");
    const timedOut = await failure(conn.call(PING, { signal: never, timeoutMs: 50 }));
    expect(String(timedOut)).toContain("no reply to Ping within 50 ms");
    conn.close();
    expect(String(await failure(conn.call(PING, { signal: never })))).toContain("closed");
  });

  test("a message over the size cap closes the connection before it is buffered", async () => {
    const liar = await serve((s) => {
      s.once("data", () => {
        s.write(`OK ${GUID}\r\n`);
        // A reply header announcing a 1 GiB body.
        const head = Buffer.from([0x6c, 2, 0, 1, 0, 0, 0, 0x40, 1, 0, 0, 0, 0, 0, 0, 0]);
        s.write(head);
      });
    });
    const conn = await open(liar);
    const err = await failure(conn.call(PING, { signal: never, timeoutMs: 5_000 }));
    expect(String(err)).toMatch(/message of \d+ bytes refused \(the cap is 16777216\)/);
  });
});
