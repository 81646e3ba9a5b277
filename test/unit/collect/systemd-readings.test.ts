import { describe, expect, test } from "bun:test";
import type { DbusValue, DbusVariant } from "../../../src/collect/_dbus-signature.ts";
import { keepProperty, propertyReading, unitReadings } from "../../../src/collect/_systemd-readings.ts";

const v = (signature: string, value: DbusValue): DbusVariant => ({ signature, value });

describe("D-Bus property → reading", () => {
  const cases: [string, DbusVariant, string | number | boolean][] = [
    ["b → boolean", v("b", true), true],
    ["s → string", v("s", "active"), "active"],
    [
      "o → string",
      v("o", "/org/freedesktop/systemd1/unit/kubelet_2eservice"),
      "/org/freedesktop/systemd1/unit/kubelet_2eservice",
    ],
    ["u → number", v("u", 4294967295), 4294967295],
    ["i → number", v("i", -1000), -1000],
    ["t (a timestamp in µs) → number", v("t", 1796188913197858n), 1796188913197858],
    ["t = 2^64 − 1 → infinity", v("t", 2n ** 64n - 1n), "infinity"],
    ["t beyond 2^53 → decimal string", v("t", 2n ** 60n), "1152921504606846976"],
    ["x below −(2^53) → decimal string", v("x", -(2n ** 60n)), "-1152921504606846976"],
    ["x = −1 → number", v("x", -1n), -1],
    ["d → number", v("d", 0.25), 0.25],
    ["d non-finite → text", v("d", Number.POSITIVE_INFINITY), "infinity"],
    ["d NaN → text", v("d", Number.NaN), "nan"],
    ["as → space-joined", v("as", ["sysinit.target", "system.slice"]), "sysinit.target system.slice"],
    [
      "as: an item with spaces or quotes is JSON-quoted",
      v("as", ["KUBELET_ARGS=--v=2 --node-ip=10.0.0.7", "HOME=/root", 'Q="x"', ""]),
      '"KUBELET_ARGS=--v=2 --node-ip=10.0.0.7" HOME=/root "Q=\\"x\\"" ""',
    ],
    ["at → space-joined, with infinity", v("at", [1n, 2n ** 64n - 1n]), "1 infinity"],
    ["empty array → empty string", v("as", []), ""],
    ["empty array of structs → empty string", v("a(sasbttttuii)", []), ""],
    ["ay → hex", v("ay", [0, 171, 255]), "00abff"],
    ["a variant inside → its value", v("v", v("u", 7)), 7],
    [
      "a(sasbttttuii) (ExecStart) → compact JSON",
      v("a(sasbttttuii)", [["/bin/sleep", ["/bin/sleep", "infinity"], false, 5n, 6n, 0n, 0n, 10, 0, 0]]),
      '[["/bin/sleep",["/bin/sleep","infinity"],false,5,6,0,0,10,0,0]]',
    ],
    ["(aiai) (SuccessExitStatus) → JSON", v("(aiai)", [[0, 1], []]), "[[0,1],[]]"],
    [
      "a(st) (IOReadBandwidthMax) → JSON, infinity inside",
      v("a(st)", [["/dev/sda", 2n ** 64n - 1n]]),
      '[["/dev/sda","infinity"]]',
    ],
    [
      "a{sv} → JSON object in wire order",
      v("a{sv}", [
        ["z", v("s", "last")],
        ["a", v("ay", [1, 2])],
      ]),
      '{"z":"last","a":"0102"}',
    ],
    ["a{ss} with a __proto__ key stays data", v("a{ss}", [["__proto__", "x"]]), '{"__proto__":"x"}'],
  ];
  for (const [what, variant, reading] of cases)
    test(what, () => {
      expect(propertyReading(variant)).toEqual(reading);
    });
});

describe("a unit's properties → readings", () => {
  test("every property but the filtered ones; first of a duplicated name wins", () => {
    const props: [string, DbusVariant][] = [
      ["Id", v("s", "kubelet.service")],
      ["Names", v("as", ["kubelet.service"])],
      ["LoadState", v("s", "loaded")],
      ["ActiveState", v("s", "active")],
      ["AllowedCPUs", v("ay", [])],
      ["AllowedMemoryNodes", v("ay", [])],
      ["Asserts", v("a(sbbsi)", [])],
      ["BPFProgram", v("a(ss)", [])],
      ["BusName", v("s", "")],
      ["SetCredential", v("a(say)", [["token", [115, 101, 99, 114, 101, 116]]])],
      ["LoadCredentialEncrypted", v("a(ss)", [])],
      ["ImportCredential", v("as", [])],
      ["MainPID", v("u", 42)],
      ["MainPID", v("u", 0)],
    ];
    expect(unitReadings(props)).toEqual({
      Names: "kubelet.service",
      LoadState: "loaded",
      ActiveState: "active",
      MainPID: 42,
    });
  });

  test("a unit systemd does not know (LoadState not-found) is left out; masked is reported", () => {
    expect(unitReadings([["LoadState", v("s", "not-found")]])).toBeUndefined();
    expect(unitReadings([["LoadState", v("s", "masked")]])).toEqual({ LoadState: "masked" });
  });

  test("keepProperty: the filter on its own", () => {
    expect(
      ["Id", "BusName", "LoadCredential", "SetCredentialEncrypted", "__proto__"].filter(keepProperty),
    ).toEqual([]);
    expect(["Description", "ExecStart", "Credentials"].filter(keepProperty)).toEqual([
      "Description",
      "ExecStart",
    ]);
  });
});
