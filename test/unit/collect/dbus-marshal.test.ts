import { describe, expect, test } from "bun:test";
import { DbusWriter } from "../../../src/collect/_dbus-marshal.ts";
import {
  DbusProtocolError,
  type DbusValue,
  parseSignature,
  signatureOf,
} from "../../../src/collect/_dbus-signature.ts";
import { DbusReader } from "../../../src/collect/_dbus-unmarshal.ts";
import { thrown } from "../../support/reject.ts";

const write = (sig: string, values: DbusValue[], littleEndian = true): Uint8Array => {
  const w = new DbusWriter(littleEndian);
  w.writeAll(sig, values);
  return w.bytes();
};
const read = (sig: string, bytes: Uint8Array, littleEndian = true): DbusValue[] =>
  new DbusReader(bytes, littleEndian).readAll(sig);
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");
const fromHex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s.replace(/\s/g, ""), "hex"));

// One value of every type systemd's properties use, in one struct-free sequence.
const EVERY: [string, DbusValue[]] = [
  "ybnqiuxtdsogvh",
  [
    0xff,
    true,
    -2,
    65535,
    -123456,
    4294967295,
    -(2n ** 63n),
    2n ** 64n - 1n,
    -1.5,
    "héllo",
    "/org/freedesktop/systemd1/unit/kubelet_2eservice",
    "a(sasbttttuii)",
    { signature: "as", value: ["a", "b"] },
    3,
  ],
];

describe("D-Bus marshalling: round trips", () => {
  for (const le of [true, false]) {
    test(`every basic type and a variant (${le ? "little" : "big"}-endian)`, () => {
      const [sig, values] = EVERY;
      expect(read(sig, write(sig, values, le), le)).toEqual(values);
    });
  }

  test("containers: arrays of structs (ExecStart's shape), dicts, nested variants, empty arrays", () => {
    const execStart = [["/bin/sleep", ["/bin/sleep", "infinity"], false, 1n, 2n, 0n, 0n, 10, 0, 0]];
    const cases: [string, DbusValue[]][] = [
      ["a(sasbttttuii)", [execStart]],
      [
        "a{sv}",
        [
          [
            ["LoadState", { signature: "s", value: "loaded" }],
            ["MainPID", { signature: "u", value: 10 }],
          ],
        ],
      ],
      ["a{ys}", [[[1, "one"]]]],
      ["v", [{ signature: "v", value: { signature: "(yt)", value: [1, 5n] } }]],
      ["aas", [[["x"], [], ["y", "z"]]]],
      ["at", [[]]],
      ["a(yt)", [[]]],
      ["ay", [[1, 2, 3]]],
      ["(ai(x))", [[[1, 2], [3n]]]],
    ];
    for (const [sig, values] of cases) expect(read(sig, write(sig, values))).toEqual(values);
  });

  test("a whole number for x or t is taken as a bigint; it reads back as one", () => {
    expect(read("xt", write("xt", [-5, 7]))).toEqual([-5n, 7n]);
  });
});

describe("D-Bus marshalling: the wire layout", () => {
  test("padding aligns each value to its own size, counted from the start", () => {
    // y, then 3 bytes of padding before the uint32; then t on an 8-byte boundary.
    expect(hex(write("yut", [1, 2, 3n]))).toBe("01000000" + "02000000" + "0300000000000000");
    // An int16 after a byte: one byte of padding.
    expect(hex(write("yn", [1, -1]))).toBe("0100ffff");
  });

  test("a string: uint32 length, UTF-8, NUL; a signature: one length byte", () => {
    expect(hex(write("s", ["hi"]))).toBe("02000000" + "686900");
    expect(hex(write("g", ["as"]))).toBe("02" + "617300");
  });

  test("an array of 8-aligned elements: the length leaves out the padding after it", () => {
    // u32 length 8, 4 bytes padding to the 8 boundary, then one t.
    expect(hex(write("at", [[1n]]))).toBe("08000000" + "00000000" + "0100000000000000");
    // An empty array of structs still pads to the element's boundary.
    expect(hex(write("a(y)", [[]]))).toBe("00000000" + "00000000");
  });

  test("a dict entry starts on 8 bytes; a variant holds its signature, then the value aligned", () => {
    const bytes = write("a{sv}", [[["k", { signature: "u", value: 7 }]]]);
    expect(hex(bytes)).toBe(
      "10000000" + "00000000" + "01000000" + "6b00" + "01" + "7500" + "000000" + "07000000",
    );
  });

  test("big-endian is the same layout with the bytes swapped", () => {
    expect(hex(write("qu", [1, 2], false))).toBe("0001" + "0000" + "00000002");
  });
});

describe("D-Bus signatures", () => {
  test("parsed into complete types, and back", () => {
    for (const sig of ["a{sv}", "a(sasbttttuii)", "aa{s(yv)}", "h", "(y(n(q)))"]) {
      expect(parseSignature(sig).map(signatureOf).join("")).toBe(sig);
    }
    expect(parseSignature("ssu")).toHaveLength(3);
  });

  const bad: [string, RegExp][] = [
    ["a", /missing/],
    ["(", /not closed/],
    ["()", /empty struct/],
    ["{sv}", /dict entry outside an array/],
    ["a{vs}", /basic type/],
    ["a{sss}", /exactly a key and a value/],
    ["z", /unexpected "z"/],
    [`${"a".repeat(33)}y`, /32 nested arrays/],
    [`${"(".repeat(33)}y${")".repeat(33)}`, /32 nested structs/],
    ["y".repeat(256), /longer than 255/],
  ];
  for (const [sig, why] of bad)
    test(`refused: ${JSON.stringify(sig.length > 20 ? `${sig.slice(0, 12)}…` : sig)}`, () => {
      expect(() => parseSignature(sig)).toThrow(why);
    });
});

describe("D-Bus unmarshalling refuses malformed input", () => {
  const refuses = (sig: string, bytes: Uint8Array, why: RegExp): void => {
    expect(thrown(() => read(sig, bytes), DbusProtocolError).message).toMatch(why);
  };

  test("truncated values, strings and arrays", () => {
    refuses("u", fromHex("0100"), /truncated/);
    refuses("t", fromHex("01000000"), /truncated/);
    refuses("s", fromHex("05000000 6869"), /truncated/);
    refuses("at", fromHex("10000000 00000000 0100000000000000"), /truncated/);
  });

  test("a length far beyond the data allocates nothing and is refused", () => {
    refuses("s", fromHex("ffffffff 00"), /truncated/);
    refuses("ay", fromHex("00000005"), /over 64 MiB/);
    refuses("ay", fromHex("ffffff03"), /truncated/);
  });

  test("bad strings: no NUL at the end, a NUL inside, not UTF-8", () => {
    refuses("s", fromHex("02000000 686901"), /NUL-terminated/);
    refuses("s", fromHex("02000000 680000"), /holds a NUL/);
    refuses("s", fromHex("02000000 c32800"), /not UTF-8/);
  });

  test("bad values: a boolean 2, a malformed object path, a bad signature inside", () => {
    refuses("b", fromHex("02000000"), /boolean 2/);
    refuses("o", fromHex("02000000 2f2f00"), /bad object path/);
    refuses("g", fromHex("01 7a00"), /bad signature/);
    refuses("v", fromHex("02 737300"), /one complete type/);
  });

  test("non-zero padding, and an element that runs past its array", () => {
    refuses("yu", fromHex("01 010000 02000000"), /non-zero padding/);
    // An array of 2 bytes holding one uint32.
    refuses("au", fromHex("02000000 01000000"), /past the array's end/);
  });

  test("variants nested deeper than 64", () => {
    const w = new DbusWriter();
    let v: DbusValue = 1;
    for (let i = 0; i < 70; i++) v = { signature: i === 0 ? "y" : "v", value: v };
    w.writeAll("v", [v]);
    refuses("v", w.bytes(), /nested more than 64/);
  });
});

describe("D-Bus marshalling refuses values that do not fit", () => {
  const cases: [string, DbusValue, RegExp][] = [
    ["y", 256, /does not fit D-Bus type y/],
    ["n", 40000, /type n/],
    ["u", -1, /type u/],
    ["i", 1.5, /type i/],
    ["t", -1n, /type t/],
    ["x", 2n ** 63n, /type x/],
    ["b", 1, /type b/],
    ["s", "a\0b", /type s/],
    ["o", "not/a/path", /bad object path/],
    ["v", "plain", /type v/],
    ["(ss)", ["one"], /struct/],
    ["as", "x", /type a/],
  ];
  for (const [sig, value, why] of cases)
    test(`${sig} ← ${typeof value === "bigint" ? `${value}n` : JSON.stringify(value)}`, () => {
      expect(() => write(sig, [value])).toThrow(why);
    });

  test("the value count must match the signature", () => {
    expect(() => write("ss", ["one"])).toThrow(/takes 2 values, not 1/);
  });
});
