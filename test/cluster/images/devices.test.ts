/**
 * A container's own /dev with the device nodes of its allocated claims (deviceDirLines), as the process
 * runtime gives it to a plain process (inContainerMounts) and to a container chrooted into its image
 * (chrootArgv): the devices are there, /dev/null still works, and the host's /dev is untouched.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { inContainerMounts } from "../controllers/process-runtime.ts";
import { chrootArgv, deviceDirLines } from "./chroot.ts";

const CAN = process.getuid?.() === 0 && process.platform === "linux";
const DEVICES = ["/dev/nvidia1", "/dev/nvidiactl", "/dev/nvidia-uvm"];
/** Lists /dev/nvidia* with shell builtins only, checks each is a character device, writes to /dev/null. */
const SCRIPT =
  'for f in /dev/nvidia*; do [ -c "$f" ] && echo "$f"; done; echo ok > /dev/null && echo null-ok; [ -c /dev/urandom ] && echo urandom-ok';

const run = (argv: string[]) => {
  const p = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
};
const hostNvidia = () => readdirSync("/dev").filter((n) => n.startsWith("nvidia"));

describe.skipIf(!CAN)("a container's /dev with its claimed devices (needs root)", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test("a plain process: the devices, /dev/null and /dev/urandom; the host's /dev untouched", () => {
    const before = hostNvidia();
    const r = run(inContainerMounts({ devices: DEVICES }, ["/bin/sh", "-c", SCRIPT]));
    expect(r).toEqual({
      code: 0,
      out: "/dev/nvidia-uvm\n/dev/nvidia1\n/dev/nvidiactl\nnull-ok\nurandom-ok\n",
      err: "",
    });
    expect(hostNvidia()).toEqual(before);
  });

  test("without devices nor a ServiceAccount the argv is left as it is", () => {
    expect(inContainerMounts({}, ["/bin/true", "x"])).toEqual(["/bin/true", "x"]);
  });

  test("a container chrooted into its image gets the same /dev", () => {
    const before = hostNvidia();
    // A minimal image: the host's dash and the libraries it loads.
    const root = mkdtempSync(join(tmpdir(), "aicr-devices-root-"));
    dirs.push(root);
    const files = ["/usr/bin/dash", "/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"];
    if (!files.every(existsSync)) return; // another libc layout: the plain-process case above covers the lines
    for (const f of files) {
      mkdirSync(dirname(join(root, f)), { recursive: true });
      copyFileSync(f, join(root, f));
    }
    const r = run(chrootArgv({ root, binds: [], argv: ["/usr/bin/dash", "-c", SCRIPT], devices: DEVICES }));
    expect(r).toEqual({
      code: 0,
      out: "/dev/nvidia-uvm\n/dev/nvidia1\n/dev/nvidiactl\nnull-ok\nurandom-ok\n",
      err: "",
    });
    expect(hostNvidia()).toEqual(before);
  });
});

test("a device path outside /dev is refused", () => {
  expect(() => deviceDirLines("/dev", ["/etc/passwd"])).toThrow("not a device node path under /dev");
  expect(() => deviceDirLines("/dev", ["/dev/../etc/x"])).toThrow("not a device node path under /dev");
  expect(() => deviceDirLines("/dev", ["/dev/.."])).toThrow("not a device node path under /dev");
});
