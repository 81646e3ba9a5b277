import { describe, expect, test } from "bun:test";
import {
  type DbusMessage,
  DEFAULT_MAX_MESSAGE_BYTES,
  decodeMessage,
  encodeMessage,
  frameLength,
  MessageType,
} from "../../../src/collect/_dbus-message.ts";

const CALL: DbusMessage = {
  type: MessageType.MethodCall,
  flags: 0,
  serial: 7,
  destination: "org.freedesktop.systemd1",
  path: "/org/freedesktop/systemd1/unit/kubelet_2eservice",
  interface: "org.freedesktop.DBus.Properties",
  member: "GetAll",
  signature: "s",
  body: [""],
};

const withBytes = (bytes: Uint8Array, at: number, ...values: number[]): Uint8Array => {
  const copy = bytes.slice();
  copy.set(values, at);
  return copy;
};

describe("D-Bus messages", () => {
  test("a method call round-trips, little- and big-endian", () => {
    for (const le of [true, false]) {
      const bytes = encodeMessage(CALL, le);
      expect(bytes[0]).toBe(le ? 0x6c : 0x42);
      expect((bytes.length - 5) % 8).toBe(0); // the body (a string "": 5 bytes) starts on 8
      expect(frameLength(bytes)).toBe(bytes.length);
      expect(decodeMessage(bytes)).toEqual(CALL);
    }
  });

  test("a reply with an a{sv} body, and an error reply", () => {
    const reply: DbusMessage = {
      type: MessageType.MethodReturn,
      flags: 1,
      serial: 9,
      replySerial: 7,
      sender: ":1.5",
      signature: "a{sv}",
      body: [[["ActiveState", { signature: "s", value: "active" }]]],
    };
    expect(decodeMessage(encodeMessage(reply))).toEqual(reply);
    const error: DbusMessage = {
      type: MessageType.Error,
      flags: 0,
      serial: 10,
      replySerial: 7,
      errorName: "org.freedesktop.DBus.Error.AccessDenied",
      signature: "s",
      body: ["no"],
    };
    expect(decodeMessage(encodeMessage(error))).toEqual(error);
  });

  test("frameLength: nothing before 16 bytes, the total from them", () => {
    const bytes = encodeMessage(CALL);
    expect(frameLength(bytes.subarray(0, 15))).toBeUndefined();
    expect(frameLength(bytes.subarray(0, 16))).toBe(bytes.length);
  });

  test("frameLength refuses a message over the cap from its first 16 bytes", () => {
    const head = encodeMessage(CALL).subarray(0, 16);
    const huge = withBytes(head, 4, 0xff, 0xff, 0xff, 0x7f); // body length ≈ 2 GiB
    expect(() => frameLength(huge)).toThrow(/refused \(the cap is 16777216\)/);
    const justOver = head.slice();
    new DataView(justOver.buffer).setUint32(4, DEFAULT_MAX_MESSAGE_BYTES, true);
    expect(() => frameLength(justOver)).toThrow(/refused/);
    expect(() => frameLength(head, 64)).toThrow(/refused \(the cap is 64\)/);
  });

  test("a bad byte-order flag or protocol version is refused", () => {
    const bytes = encodeMessage(CALL);
    expect(() => frameLength(withBytes(bytes, 0, 0x78))).toThrow(/byte-order flag 120/);
    expect(() => decodeMessage(withBytes(bytes, 3, 2))).toThrow(/protocol version 2/);
  });

  test("truncated or overlong input is refused", () => {
    const bytes = encodeMessage(CALL);
    expect(() => decodeMessage(bytes.subarray(0, 10))).toThrow(/truncated/);
    expect(() => decodeMessage(bytes.subarray(0, bytes.length - 1))).toThrow(/message is \d+ bytes, got/);
    expect(() => decodeMessage(new Uint8Array([...bytes, 0]))).toThrow(/message is \d+ bytes, got/);
  });

  test("a message without its required fields, serial 0 or an unknown type is refused", () => {
    const { member: _, ...noMember } = CALL;
    expect(() => decodeMessage(encodeMessage(noMember as DbusMessage))).toThrow(/without its member field/);
    const { replySerial: __, ...reply } = { ...CALL, type: MessageType.MethodReturn, replySerial: 1 };
    expect(() => decodeMessage(encodeMessage(reply as DbusMessage))).toThrow(/without its replySerial/);
    expect(() => decodeMessage(encodeMessage({ ...CALL, serial: 0 }))).toThrow(/serial 0/);
    expect(() => decodeMessage(withBytes(encodeMessage(CALL), 1, 9))).toThrow(/unknown message type 9/);
  });

  test("a body that disagrees with its signature is refused", () => {
    const bytes = encodeMessage({ ...CALL, signature: "t", body: [1n] });
    expect(decodeMessage(bytes).body).toEqual([1n]);
    // The SIGNATURE header field (code 8, variant "g", then length 1 and "t"): say "u" instead.
    const at = bytes.findIndex((b, i) => b === 8 && bytes[i + 2] === 0x67 && bytes[i + 5] === 0x74);
    const forged = withBytes(bytes, at + 5, 0x75);
    expect(() => decodeMessage(forged)).toThrow(/4 bytes past its signature/);
    const wrongType = withBytes(bytes, at + 2, 0x73); // the field's variant says "s", not "g"
    expect(() => decodeMessage(wrongType)).toThrow();
  });
});
