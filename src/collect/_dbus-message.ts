/**
 * D-Bus messages (pure): the fixed 12-byte start (byte order 'l' or 'B', type, flags, version 1,
 * body length, serial), the header fields as a{yv}, padding to 8, the body. frameLength tells from
 * the first 16 bytes how long the whole message is — and refuses one over the cap before a byte of
 * it is buffered. Messages are written little-endian; both byte orders are read.
 */
import { DbusWriter } from "./_dbus-marshal.ts";
import { DbusProtocolError, type DbusValue, type DbusVariant } from "./_dbus-signature.ts";
import { DbusReader } from "./_dbus-unmarshal.ts";

export const MessageType = { MethodCall: 1, MethodReturn: 2, Error: 3, Signal: 4 } as const;
export type MessageTypeCode = (typeof MessageType)[keyof typeof MessageType];
export const NO_REPLY_EXPECTED = 0x1;
/** No message on this connection may be larger (the specification allows 128 MiB; systemd's replies are KiBs). */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
const FIXED_BYTES = 16;

export interface DbusMessage {
  type: MessageTypeCode;
  flags: number;
  serial: number;
  path?: string | undefined;
  interface?: string | undefined;
  member?: string | undefined;
  errorName?: string | undefined;
  replySerial?: number | undefined;
  destination?: string | undefined;
  sender?: string | undefined;
  /** The body's signature ("" for no body). */
  signature: string;
  body: DbusValue[];
}

// Header field codes, their names in DbusMessage and the one type each must carry.
const FIELDS = [
  [1, "path", "o"],
  [2, "interface", "s"],
  [3, "member", "s"],
  [4, "errorName", "s"],
  [5, "replySerial", "u"],
  [6, "destination", "s"],
  [7, "sender", "s"],
  [8, "signature", "g"],
] as const;

const REQUIRED: Readonly<Record<MessageTypeCode, readonly (keyof DbusMessage)[]>> = {
  1: ["path", "member"],
  2: ["replySerial"],
  3: ["errorName", "replySerial"],
  4: ["path", "interface", "member"],
};

export function encodeMessage(msg: DbusMessage, littleEndian = true): Uint8Array {
  const body = new DbusWriter(littleEndian);
  body.writeAll(msg.signature, msg.body);
  const fields: DbusValue[] = [];
  for (const [code, key, sig] of FIELDS) {
    const value = msg[key];
    if (value === undefined || (key === "signature" && value === "")) continue;
    fields.push([code, { signature: sig, value } satisfies DbusVariant]);
  }
  const w = new DbusWriter(littleEndian);
  w.writeAll("yyyyuua(yv)", [
    littleEndian ? 0x6c : 0x42,
    msg.type,
    msg.flags,
    1,
    body.length,
    msg.serial,
    fields,
  ]);
  w.align(8);
  const out = new Uint8Array(w.length + body.length);
  out.set(w.bytes());
  out.set(body.bytes(), w.length);
  return out;
}

function byteOrder(flag: number | undefined): boolean {
  if (flag === 0x6c) return true;
  if (flag === 0x42) return false;
  throw new DbusProtocolError(`bad byte-order flag ${flag} (expected 'l' or 'B')`);
}

/**
 * The whole message's length once its first 16 bytes are in `head`; undefined before. Throws for a
 * bad byte order or version, and for a message over `maxBytes` (nothing more is read then).
 */
export function frameLength(head: Uint8Array, maxBytes = DEFAULT_MAX_MESSAGE_BYTES): number | undefined {
  if (head.length < FIXED_BYTES) return undefined;
  const le = byteOrder(head[0]);
  if (head[3] !== 1) throw new DbusProtocolError(`unsupported protocol version ${head[3]}`);
  const view = new DataView(head.buffer, head.byteOffset, FIXED_BYTES);
  const body = view.getUint32(4, le);
  const fields = view.getUint32(12, le);
  const total = FIXED_BYTES + Math.ceil(fields / 8) * 8 + body;
  if (body > maxBytes || fields > maxBytes || total > maxBytes)
    throw new DbusProtocolError(`message of ${total} bytes refused (the cap is ${maxBytes})`);
  return total;
}

/** Exactly one whole message. */
export function decodeMessage(bytes: Uint8Array): DbusMessage {
  const total = frameLength(bytes, Number.MAX_SAFE_INTEGER);
  if (total === undefined)
    throw new DbusProtocolError(`truncated: a message starts with 16 bytes, got ${bytes.length}`);
  if (bytes.length !== total) throw new DbusProtocolError(`message is ${total} bytes, got ${bytes.length}`);
  const le = byteOrder(bytes[0]);
  const r = new DbusReader(bytes, le);
  const [, type, flags, , bodyLength, serial, fields] = r.readAll("yyyyuua(yv)") as [
    number,
    number,
    number,
    number,
    number,
    number,
    [number, DbusVariant][],
  ];
  if (type < 1 || type > 4) throw new DbusProtocolError(`unknown message type ${type}`);
  if (serial === 0) throw new DbusProtocolError("serial 0");
  const msg: DbusMessage = { type: type as MessageTypeCode, flags, serial, signature: "", body: [] };
  for (const [code, variant] of fields) {
    const known = FIELDS.find(([c]) => c === code);
    if (!known) continue; // unknown fields are ignored, as the specification says
    if (variant.signature !== known[2])
      throw new DbusProtocolError(`header field ${known[1]} of type ${variant.signature}, not ${known[2]}`);
    (msg as unknown as Record<string, DbusValue>)[known[1]] = variant.value;
  }
  for (const key of REQUIRED[msg.type])
    if (msg[key] === undefined) throw new DbusProtocolError(`message type ${type} without its ${key} field`);
  r.align(8);
  if (r.pos + bodyLength !== total) throw new DbusProtocolError("header and body lengths disagree");
  const body = new DbusReader(bytes, le, r.pos, total);
  msg.body = body.readAll(msg.signature);
  if (body.pos !== total)
    throw new DbusProtocolError(`body has ${total - body.pos} bytes past its signature`);
  return msg;
}
