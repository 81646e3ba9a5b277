/**
 * Build facts: Bun's metafile mapped to package-lock.json (what is in the binary, never a
 * devDependency), Bun's runtime package per target, and the facts a linux binary carries in its
 * image info; then the real build's facts, from scripts/image/project.ts as a program.
 */
import { describe, expect, test } from "bun:test";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { encodeInfo, parseInfo } from "../../src/image/_aicr-image.ts";
import {
  type BuildFacts,
  bundledPackages,
  integrityDigests,
  type Lockfile,
  lockfileKey,
  type Metafile,
  runtimePackage,
} from "../../src/image/attest/_facts.ts";
import { fakeInfo, fakeRuntime } from "./_fixtures.ts";
import { ROOT, run } from "./_image.ts";

const sri = (c: string) => `sha512-${Buffer.alloc(64, c).toString("base64")}`;

const LOCK: Lockfile = {
  packages: {
    "": { name: "aicr", version: "0.1.0" },
    "node_modules/yaml": { version: "2.9.1", integrity: sri("y"), license: "ISC" },
    "node_modules/@scope/lib": { version: "1.0.0", integrity: sri("s") },
    "node_modules/outer": { version: "3.0.0", integrity: sri("o"), license: "MIT" },
    "node_modules/outer/node_modules/yaml": { version: "1.10.2", integrity: sri("z"), license: "ISC" },
    "node_modules/typescript": { version: "7.0.2", integrity: sri("t"), license: "Apache-2.0", dev: true },
    "node_modules/@oven/bun-linux-x64": { version: "1.4.5", integrity: sri("b"), license: "MIT", dev: true },
    "node_modules/@oven/bun-linux-aarch64": {
      version: "1.4.5",
      integrity: sri("a"),
      license: "MIT",
      dev: true,
    },
  },
};

const meta = (inputs: Record<string, number>, more: Record<string, number> = {}): Metafile => ({
  outputs: {
    "./aicr": {
      inputs: Object.fromEntries(Object.entries(inputs).map(([k, n]) => [k, { bytesInOutput: n }])),
    },
    "asset.js": {
      inputs: Object.fromEntries(Object.entries(more).map(([k, n]) => [k, { bytesInOutput: n }])),
    },
  },
});

describe("bundledPackages", () => {
  test("only inputs with bytes in the output, mapped to their lockfile entry (nested and scoped), sorted, once each", () => {
    const packages = bundledPackages(
      meta(
        {
          "src/main.ts": 100,
          "node_modules/yaml/dist/index.js": 10,
          "node_modules/yaml/dist/other.js": 5,
          "node_modules/outer/index.js": 3,
          "node_modules/outer/node_modules/yaml/index.js": 7,
          "node_modules/@scope/lib/x.js": 0, // tree-shaken away: not in the binary
          "node_modules/typescript/lib/unused.js": 0, // a devDependency that left no bytes
        },
        { "node_modules/@scope/lib/y.js": 0 },
      ),
      LOCK,
    );
    expect(packages).toEqual([
      { name: "outer", version: "3.0.0", integrity: sri("o"), license: "MIT" },
      { name: "yaml", version: "1.10.2", integrity: sri("z"), license: "ISC" },
      { name: "yaml", version: "2.9.1", integrity: sri("y"), license: "ISC" },
    ]);
  });

  test("the package's own package.json licence when the lockfile has none", () => {
    const packages = bundledPackages(meta({ "node_modules/@scope/lib/x.js": 1 }), LOCK, (key) =>
      key === "node_modules/@scope/lib" ? "BSD-3-Clause" : undefined,
    );
    expect(packages).toEqual([
      { name: "@scope/lib", version: "1.0.0", integrity: sri("s"), license: "BSD-3-Clause" },
    ]);
  });

  test("a devDependency with bytes in the output is refused, naming it and the input", () => {
    expect(() => bundledPackages(meta({ "node_modules/typescript/lib/ts.js": 12 }), LOCK)).toThrow(
      "node_modules/typescript is a devDependency, yet node_modules/typescript/lib/ts.js is bundled",
    );
  });

  test("an input the lockfile does not know, or an entry without integrity, is refused with the remedy", () => {
    expect(() => bundledPackages(meta({ "node_modules/ghost/a.js": 1 }), LOCK)).toThrow(
      "package-lock.json has no node_modules/ghost",
    );
    const partial: Lockfile = { packages: { "node_modules/x": { version: "1.0.0" } } };
    expect(() => bundledPackages(meta({ "node_modules/x/a.js": 1 }), partial)).toThrow(
      "lacks a version or integrity",
    );
  });

  test("lockfileKey: the innermost package of a path, absolute or relative", () => {
    expect(lockfileKey("node_modules/a/b.js")).toBe("node_modules/a");
    expect(lockfileKey("/work/main/node_modules/@s/p/lib/x.js")).toBe("node_modules/@s/p");
    expect(lockfileKey("node_modules/a/node_modules/@s/p/x.js")).toBe("node_modules/a/node_modules/@s/p");
    expect(lockfileKey("src/main.ts")).toBeUndefined();
  });
});

describe("runtimePackage", () => {
  test("Bun's runtime package per target, at the compiling Bun's version", () => {
    expect(runtimePackage(LOCK, "linux-x64", "1.4.5")).toEqual({
      name: "@oven/bun-linux-x64",
      version: "1.4.5",
      integrity: sri("b"),
      license: "MIT",
    });
    expect(runtimePackage(LOCK, "linux-arm64", "1.4.5").name).toBe("@oven/bun-linux-aarch64");
    expect(() => runtimePackage(LOCK, "linux-arm64", "1.5.0")).toThrow(
      "pins @oven/bun-linux-aarch64 1.4.5, but Bun 1.5.0",
    );
    expect(() => runtimePackage(LOCK, "darwin-arm64", "1.4.5")).toThrow(
      "no node_modules/@oven/bun-darwin-aarch64",
    );
    expect(() => runtimePackage(LOCK, "windows-x64", "1.4.5")).toThrow("no Bun runtime package");
  });

  test("integrity as hex digests by algorithm", () => {
    expect(integrityDigests(`${sri("a")} sha1-${Buffer.alloc(20, 1).toString("base64")}`)).toEqual({
      sha512: "61".repeat(64),
      sha1: "01".repeat(20),
    });
    expect(integrityDigests("md5-xyz")).toEqual({});
  });
});

describe("the image info a binary carries", () => {
  const info = fakeInfo("amd64", fakeRuntime("amd64"));

  test("round-trips with its Debian package and build facts, keys in a fixed order", () => {
    const bytes = encodeInfo(info);
    expect(parseInfo(bytes)).toEqual(info);
    const shuffled = {
      ...info,
      build: Object.fromEntries(Object.entries(info.build).reverse()) as BuildFacts,
    };
    expect(encodeInfo(shuffled)).toEqual(bytes);
    const keys = Object.keys(JSON.parse(new TextDecoder().decode(bytes)));
    expect(keys.slice(-3)).toEqual(["labels", "runtimeDeb", "build"]);
  });

  test("refuses facts that are missing a field or belong to another version", () => {
    const broken = (over: object) => new TextEncoder().encode(JSON.stringify({ ...info, ...over }));
    expect(() => parseInfo(broken({ build: { ...info.build, lockfileSha256: 1 } }))).toThrow(
      "build facts: lockfileSha256 is not a string",
    );
    expect(() => parseInfo(broken({ build: { ...info.build, packages: [{ name: "x" }] } }))).toThrow(
      "packages[0]: version is not a string",
    );
    expect(() => parseInfo(broken({ runtimeDeb: { ...info.runtimeDeb, url: undefined } }))).toThrow(
      "runtime package: url is not a string",
    );
    expect(() => parseInfo(broken({ build: { ...info.build, version: "9.9.9" } }))).toThrow(
      "another version",
    );
  });
});

describe("the real build's facts", () => {
  test("the packages in the bundle are dependencies, never devDependencies; Bun's runtime is the lockfile's", async () => {
    const r = await run([process.execPath, "scripts/image/project.ts", "facts", "linux-x64"]);
    expect(r.stderr).toBe("");
    const facts = JSON.parse(r.stdout) as BuildFacts;
    const lock = JSON.parse(await readFile(join(ROOT, "package-lock.json"), "utf8")) as Lockfile;
    const dev = new Set(
      Object.entries(lock.packages)
        .filter(([, e]) => e.dev)
        .map(([k]) => k.slice(k.lastIndexOf("node_modules/") + 13)),
    );
    const names = facts.packages.map((p) => p.name);
    expect(names.filter((n) => dev.has(n))).toEqual([]);
    for (const direct of ["@kubernetes/client-node", "citty", "consola", "valibot", "yaml"])
      expect(names).toContain(direct);
    for (const devOnly of ["typescript", "fast-check", "msw", "@biomejs/biome", "@types/bun"])
      expect(names).not.toContain(devOnly);
    for (const p of facts.packages) {
      const entry = lock.packages[`node_modules/${p.name}`];
      expect(entry?.integrity).toBe(p.integrity);
      expect(entry?.version).toBe(p.version);
    }
    expect(facts.runtime).toMatchObject({
      name: "@oven/bun-linux-x64",
      version: Bun.version,
      integrity: lock.packages["node_modules/@oven/bun-linux-x64"]?.integrity,
    });
    expect(facts).toMatchObject({
      target: "linux-x64",
      command: "bun scripts/build.ts --targets linux-x64",
      bun: Bun.version,
      lockfileSha256: new Bun.CryptoHasher("sha256")
        .update(await readFile(join(ROOT, "package-lock.json")))
        .digest("hex"),
    });
  }, 60_000);
});
