import { expect, test } from "bun:test";
import { homeDir } from "../../../src/core/home.ts";

test("$HOME wins; else the password database's answer", () => {
  expect(homeDir({ HOME: "/home/op" }, () => "/elsewhere")).toBe("/home/op");
  expect(homeDir({}, () => "/root")).toBe("/root");
});

test("a user with no passwd entry (aicr's image has no /etc/passwd) has no home, not a crash", () => {
  const lookup = () => {
    throw new Error("ENOENT: no such file or directory, uv_os_homedir");
  };
  expect(homeDir({}, lookup)).toBeUndefined();
  expect(homeDir({ HOME: "" }, lookup)).toBeUndefined();
});
