import { expect, test } from "bun:test";
import { quantityValue } from "../../../src/core/quantity.ts";

test("quantities in base units: decimal and binary suffixes, exponents, fractions", () => {
  expect(quantityValue("2")).toBe(2);
  expect(quantityValue("500m")).toBe(0.5);
  expect(quantityValue("1.5")).toBe(1.5);
  expect(quantityValue(".5")).toBe(0.5);
  expect(quantityValue("8Gi")).toBe(8 * 2 ** 30);
  expect(quantityValue("1G")).toBe(1e9);
  expect(quantityValue("1e3")).toBe(1000);
  expect(quantityValue("1k")).toBe(1000);
  expect(quantityValue("128974848")).toBe(quantityValue("123Mi"));
  expect(quantityValue("129e6")).toBeGreaterThan(quantityValue("123Mi"));
});

test("what is not a quantity is NaN (never larger or smaller than anything)", () => {
  for (const q of ["", "lots", "8XB", "1.2.3", "-1", "Gi"]) expect(quantityValue(q)).toBeNaN();
});
