import { describe, expect, test } from "bun:test";
import { chmod, mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { collectOs } from "../../../src/collect/_os.ts";
import { parseKernelCmdline, parseOsRelease, sysctlReadings } from "../../../src/collect/_os-parse.ts";
import type { Measurement } from "../../../src/collect/_types.ts";
import { captureLog, collectorOptions, HOSTS, withTempDir } from "./_helpers.ts";

function subtype(m: Measurement, name: string): Record<string, string | number | boolean> | undefined {
  return m.subtypes.find((s) => s.subtype === name)?.data;
}

/** Whether this process can read a file whose mode is 000 (true as root, which ignores permissions). */
async function readableDespiteMode000(path: string): Promise<boolean> {
  return readFile(path).then(
    () => true,
    () => false,
  );
}

describe("OS collector on the 8x H100 fixture", () => {
  test("reads all four subtypes in order", async () => {
    const m = await collectOs(collectorOptions(join(HOSTS, "h100-node")));
    expect(m.type).toBe("OS");
    expect(m.subtypes.map((s) => s.subtype)).toEqual(["release", "grub", "kmod", "sysctl"]);
  });

  test("release follows /etc/os-release's relative symlink inside the host root", async () => {
    const m = await collectOs(collectorOptions(join(HOSTS, "h100-node")));
    const release = subtype(m, "release");
    expect(release?.ID).toBe("ubuntu");
    expect(release?.VERSION_ID).toBe("24.04");
    expect(release?.PRETTY_NAME).toBe("Ubuntu 24.04.1 LTS");
    expect(release?.VERSION_CODENAME).toBe("noble");
  });

  test("grub drops root, keeps flags as empty strings and the last of a repeated key", async () => {
    const grub = subtype(await collectOs(collectorOptions(join(HOSTS, "h100-node"))), "grub");
    expect(grub?.root).toBeUndefined();
    expect(grub?.quiet).toBe("");
    expect(grub?.ro).toBe("");
    expect(grub?.BOOT_IMAGE).toBe("/boot/vmlinuz-6.8.0-1017-nvidia");
    expect(grub?.console).toBe("ttyS0,115200n8");
    expect(grub?.pci).toBe("realloc=off");
    expect(grub?.module_blacklist).toBe("nouveau");
  });

  test("kmod lists every loaded module as true", async () => {
    const kmod = subtype(await collectOs(collectorOptions(join(HOSTS, "h100-node"))), "kmod");
    expect(Object.keys(kmod ?? {})).toHaveLength(10);
    expect(kmod?.nvidia).toBe(true);
    expect(kmod?.nvidia_uvm).toBe(true);
    expect(kmod?.mlx5_core).toBe(true);
  });

  test("sysctl keys are host paths, trimmed, with net/, dev/cdrom and symlinks skipped", async () => {
    const sysctl = subtype(await collectOs(collectorOptions(join(HOSTS, "h100-node"))), "sysctl") ?? {};
    expect(sysctl["/proc/sys/kernel/osrelease"]).toBe("6.8.0-1017-nvidia");
    expect(sysctl["/proc/sys/vm/max_map_count"]).toBe("262144");
    expect(sysctl["/proc/sys/fs/inotify/max_user_watches"]).toBe("1048576");
    const keys = Object.keys(sysctl);
    expect(keys.every((k) => k.startsWith("/proc/sys/"))).toBe(true);
    expect(keys.filter((k) => k.startsWith("/proc/sys/net"))).toEqual([]);
    expect(keys.filter((k) => k.startsWith("/proc/sys/dev/cdrom"))).toEqual([]);
    expect(keys.filter((k) => k.includes("-link"))).toEqual([]);
  });

  test("a key-value multi-line file expands; any other multi-line file is kept whole", async () => {
    const sysctl = subtype(await collectOs(collectorOptions(join(HOSTS, "h100-node"))), "sysctl") ?? {};
    expect(sysctl["/proc/sys/sunrpc/transports/tcp"]).toBe("1048576");
    expect(sysctl["/proc/sys/sunrpc/transports/tcp-bc"]).toBe("1048576");
    expect(sysctl["/proc/sys/sunrpc/transports"]).toBeUndefined();
    expect(sysctl["/proc/sys/fs/binfmt_misc/python3.12"]).toBe(
      "enabled\ninterpreter /usr/bin/python3.12\nflags:\noffset 0\nmagic cb0d0d0a",
    );
  });
});

describe("OS collector on other hosts", () => {
  test("falls back to /usr/lib/os-release when /etc/os-release is absent", async () => {
    const release = subtype(await collectOs(collectorOptions(join(HOSTS, "cpu-node"))), "release");
    expect(release?.ID).toBe("rhel");
    expect(release?.VERSION_ID).toBe("9.4");
    expect(release?.REDHAT_BUGZILLA_PRODUCT_VERSION).toBe("9.4");
  });

  test("an absolute /etc/os-release symlink is resolved inside the host root, not the container", async () => {
    await withTempDir(async (root) => {
      await mkdir(join(root, "etc"), { recursive: true });
      await mkdir(join(root, "usr/lib"), { recursive: true });
      await writeFile(join(root, "usr/lib/os-release"), 'ID=flatcar\nVERSION_ID="4081.2.0"\n');
      await symlink("/usr/lib/os-release", join(root, "etc/os-release"));
      const release = subtype(await collectOs(collectorOptions(root)), "release");
      expect(release).toEqual({ ID: "flatcar", VERSION_ID: "4081.2.0" });
    });
  });

  test("malformed files: odd os-release lines, quoted and init-only cmdline parts, empty modules", async () => {
    const m = await collectOs(collectorOptions(join(HOSTS, "malformed-node")));
    expect(subtype(m, "release")).toEqual({
      ID: "ubuntu",
      VERSION_ID: "22.04.5",
      NAME: '"Half quoted',
      EMPTY: "",
      SPACED: "value with spaces",
    });
    expect(subtype(m, "grub")).toEqual({
      quiet: "",
      splash: "",
      dyndbg: "file drivers/gpu/* +p",
      "nvidia.NVreg_EnableGpuFirmware": "1",
    });
    expect(subtype(m, "kmod")).toEqual({});
    expect(subtype(m, "sysctl")).toEqual({
      "/proc/sys/kernel/blank-lines": "",
      "/proc/sys/kernel/empty": "",
      "/proc/sys/kernel/tabs": "0\t0\t0",
    });
  });

  test("an empty host root gives an OS measurement without subtypes, not an error", async () => {
    await withTempDir(async (root) => {
      const m = await collectOs(collectorOptions(root));
      expect(m).toEqual({ type: "OS", subtypes: [] });
    });
  });

  test("unreadable files are skipped (or read, when running as root) without losing the rest", async () => {
    await withTempDir(async (root) => {
      await mkdir(join(root, "proc/sys/kernel/locked-dir"), { recursive: true });
      await mkdir(join(root, "etc"), { recursive: true });
      await writeFile(join(root, "proc/sys/kernel/osrelease"), "6.8.0\n");
      await writeFile(join(root, "proc/sys/kernel/secret"), "42\n");
      await writeFile(join(root, "proc/sys/kernel/locked-dir/inner"), "7\n");
      await writeFile(join(root, "etc/os-release"), "ID=ubuntu\n");
      await chmod(join(root, "proc/sys/kernel/secret"), 0o000);
      await chmod(join(root, "proc/sys/kernel/locked-dir"), 0o000);
      await chmod(join(root, "etc/os-release"), 0o000);
      const asRoot = await readableDespiteMode000(join(root, "proc/sys/kernel/secret"));
      const { log, lines } = captureLog();
      try {
        const m = await collectOs(collectorOptions(root, { log }));
        const sysctl = subtype(m, "sysctl") ?? {};
        expect(sysctl["/proc/sys/kernel/osrelease"]).toBe("6.8.0");
        if (asRoot) {
          expect(sysctl["/proc/sys/kernel/secret"]).toBe("42");
          expect(sysctl["/proc/sys/kernel/locked-dir/inner"]).toBe("7");
          expect(subtype(m, "release")).toEqual({ ID: "ubuntu" });
        } else {
          expect(sysctl["/proc/sys/kernel/secret"]).toBeUndefined();
          expect(sysctl["/proc/sys/kernel/locked-dir/inner"]).toBeUndefined();
          expect(subtype(m, "release")).toBeUndefined();
          expect(lines.some((l) => l.level === "warn" && l.subtype === "release")).toBe(true);
        }
      } finally {
        await chmod(join(root, "proc/sys/kernel/locked-dir"), 0o755);
      }
    });
  });

  test("a cancelled signal fails the collector instead of returning partial data", async () => {
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    const run = collectOs(collectorOptions(join(HOSTS, "h100-node"), { signal: controller.signal }));
    await expect(run).rejects.toThrow("stop");
  });
});

describe("OS parsers", () => {
  test("os-release trims one layer of single or double quotes", () => {
    expect(parseOsRelease("A='x'\nB=\"y\"\nC=z\n# D=1\n")).toEqual({ A: "x", B: "y", C: "z" });
  });

  test("cmdline: everything after a bare -- belongs to init", () => {
    expect(parseKernelCmdline("ro quiet -- --init-flag x=1\n")).toEqual({ ro: "", quiet: "" });
  });

  test("sysctl readings: single line, key-value lines, list", () => {
    expect(sysctlReadings("/p", "1\n")).toEqual({ "/p": "1" });
    expect(sysctlReadings("/p", "a 1\nb 2 3\n")).toEqual({ "/p/a": "1", "/p/b": "2 3" });
    expect(sysctlReadings("/p", "file\npipe\nsocket\n")).toEqual({ "/p": "file\npipe\nsocket" });
  });
});
