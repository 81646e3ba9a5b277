/**
 * The Go tests of the control plane's supervisor (test/control-plane/up: the stopping flag, the held
 * ports, the CA file), run under the race detector as part of `bun test`. Only that package: it needs
 * nothing but the standard library and golang.org/x/sys, so its race build takes seconds, where
 * `./...` would compile all of Kubernetes with -race. Go caches the result of an unchanged test.
 * -race needs cgo (gcc).
 */
import { expect, test } from "bun:test";
import { MODULE_DIR } from "./build.ts";

test("go test -race ./up/ (the control plane's supervisor)", async () => {
  const proc = Bun.spawn(["go", "test", "-race", "./up/"], {
    cwd: MODULE_DIR,
    env: { ...process.env, GOFLAGS: "-mod=mod -buildvcs=false", GOTOOLCHAIN: "local" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) process.stderr.write(`go test -race ./up/ failed:\n${out}${err}`);
  expect(code).toBe(0);
}, 300_000);
