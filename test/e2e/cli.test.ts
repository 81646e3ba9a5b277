import { expect, test } from "bun:test";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { aicr, ROOT } from "./_aicr.ts";

test("--version prints the package version and exits 0", async () => {
  const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { version: string };
  const r = await aicr(["--version"]);
  expect(r).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
});

test("--help lists the working commands and the global flags, without colour in a pipe", async () => {
  const r = await aicr(["--help"]);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("render-rbac");
  for (const flag of ["--kubeconfig", "--context", "--namespace", "--debug", "--log-json", "--run-id"]) {
    expect(r.stdout).toContain(flag);
  }
  expect(r.stdout).not.toContain("\x1b[");
});

test("a command's --help shows its own flags and the shared ones", async () => {
  const r = await aicr(["render-rbac", "--help"]);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("--discover-network");
  expect(r.stdout).toContain("--kubeconfig");
  expect(r.stdout).toContain("SERVICE-ACCOUNT");
});

test("an unknown command exits 2 and lists the real ones", async () => {
  const r = await aicr(["snapshots"]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('unknown command "snapshots"');
  expect(r.stderr).toContain("render-rbac");
  expect(r.stdout).toBe("");
});

test("an unknown flag is an error, not silently ignored", async () => {
  const r = await aicr(["render-rbac", "sa", "--discover-netwrok"]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('unknown flag "--discover-netwrok"');
});

test("a missing positional argument exits 2 with the usage hint", async () => {
  const r = await aicr(["render-rbac"]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("SERVICE-ACCOUNT");
});
