import { expect, test } from "bun:test";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { aicr, ROOT } from "./_aicr.ts";

test("--version prints the package version first, then revision, build date and Bun; exits 0", async () => {
  const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { version: string };
  const r = await aicr(["--version"]);
  expect(r.code).toBe(0);
  // The version first (scripts read the first word), then the revision, the build date and Bun.
  expect(r.stdout.split(" ")[0]).toBe(pkg.version);
  expect(r.stdout).toMatch(
    /^\S+ \(revision [0-9a-f]{12}, built \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ, bun \d+\.\d+\.\d+\)\n$/,
  );
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
