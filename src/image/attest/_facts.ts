/**
 * What a build knows about one binary, for its SBOM and provenance: the npm packages whose code is
 * in it (Bun's metafile: inputs with bytes in the output, mapped to package-lock.json), Bun's
 * runtime package for the target, the lockfile's digest, the revision, version, build date and the
 * command that rebuilds it. A linux glibc binary carries them (in its image info), so `aicr image
 * save` writes the SBOM and provenance `npm run image` writes. Pure.
 */

/** The project's home: the base of the SBOM namespaces, the provenance build type and builder ids. */
export const PROJECT_URL = "https://github.com/aicr-project/aicr";

/** The git source a revision names, as SPDX and SLSA write a VCS location; undefined without a commit. */
export const sourceUri = (revision: string): string | undefined =>
  /^[0-9a-f]{40}$/.test(revision) ? `git+${PROJECT_URL}@${revision}` : undefined;

/** Subresource Integrity (`sha512-<base64> …`) as hex digests by algorithm: { sha512: "<hex>" }. */
export function integrityDigests(integrity: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of integrity.trim().split(/\s+/)) {
    const m = /^(sha1|sha256|sha384|sha512)-([A-Za-z0-9+/]+={0,2})$/.exec(part);
    if (m && !out[m[1]!]) out[m[1]!] = Buffer.from(m[2]!, "base64").toString("hex");
  }
  return out;
}

/** One npm package as the lockfile pins it. */
export interface NpmPackage {
  name: string;
  version: string;
  /** The lockfile's `integrity` (Subresource Integrity: `sha512-<base64>`). */
  integrity: string;
  /** The lockfile's `resolved` URL, when it records one. */
  resolved?: string;
  /** As declared (the lockfile's `license`, else the package's package.json); checked when written. */
  license?: string;
}

export interface BuildFacts {
  version: string;
  revision: string;
  /** The build date (the commit's, or SOURCE_DATE_EPOCH), ISO 8601 UTC: never the wall clock. */
  built: string;
  /** The image repository baked into the binary. */
  repository: string;
  /** aicr's own licence (package.json). */
  license: string;
  /** linux-x64, linux-arm64, darwin-arm64, linux-x64-musl. */
  target: string;
  /** The command that rebuilds exactly this binary. */
  command: string;
  /** The Bun version that compiled it. */
  bun: string;
  /** sha256 (hex) of package-lock.json. */
  lockfileSha256: string;
  /** The npm package Bun's runtime for this target comes from. */
  runtime: NpmPackage;
  /** Every npm package with code in the binary, by name then version. */
  packages: NpmPackage[];
}

/** The Debian package the image's runtime layer comes from. */
export interface DebFacts {
  name: string;
  version: string;
  architecture: string;
  /** sha256 (hex) of the .deb. */
  sha256: string;
  /** Where the .deb is in Debian's pool. */
  url: string;
  /** The purl distro qualifier, e.g. debian-12. */
  distro: string;
}

/** What package-lock.json (v2/v3) says, as far as the SBOM needs it. */
export interface Lockfile {
  packages: Record<
    string,
    {
      name?: string;
      version?: string;
      integrity?: string;
      resolved?: string;
      license?: string;
      dev?: boolean;
    }
  >;
}

/** What Bun's --metafile says, as far as the SBOM needs it. */
export interface Metafile {
  outputs: Record<string, { inputs?: Record<string, { bytesInOutput?: number }> }>;
}

/** The npm package Bun's runtime comes from, per compile target (as package-lock.json names it). */
export const BUN_RUNTIME_PACKAGE: Record<string, string> = {
  "linux-x64": "@oven/bun-linux-x64",
  "linux-arm64": "@oven/bun-linux-aarch64",
  "darwin-arm64": "@oven/bun-darwin-aarch64",
  "linux-x64-musl": "@oven/bun-linux-x64-musl",
};

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The lockfile key (`node_modules/a/node_modules/@s/b`) of the package an input file belongs to. */
export function lockfileKey(input: string): string | undefined {
  const at = input.indexOf("node_modules/");
  if (at < 0) return undefined;
  return /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input.slice(at))?.[1];
}

function entry(lockfile: Lockfile, key: string, why: string, license?: string): NpmPackage {
  const e = lockfile.packages[key];
  if (!e)
    throw new Error(`package-lock.json has no ${key} (${why}): run npm ci, or npm install to update it`);
  const name = e.name ?? key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length);
  if (!e.version || !e.integrity)
    throw new Error(
      `package-lock.json's ${key} lacks a version or integrity: run npm install to complete it`,
    );
  const declared = e.license ?? license;
  return {
    name,
    version: e.version,
    integrity: e.integrity,
    ...(e.resolved ? { resolved: e.resolved } : {}),
    ...(declared ? { license: declared } : {}),
  };
}

/**
 * The npm packages with code in the output: every input under node_modules with bytesInOutput > 0,
 * mapped to its lockfile entry; `licenseOf(key)` is the package's own package.json licence (the
 * fallback when the lockfile records none). A devDependency there is an error: it must not ship.
 */
export function bundledPackages(
  metafile: Metafile,
  lockfile: Lockfile,
  licenseOf: (key: string) => string | undefined = () => undefined,
): NpmPackage[] {
  const keys = new Map<string, string>();
  for (const output of Object.values(metafile.outputs ?? {}))
    for (const [input, info] of Object.entries(output.inputs ?? {})) {
      const key = lockfileKey(input);
      if (key && (info.bytesInOutput ?? 0) > 0 && !keys.has(key)) keys.set(key, input);
    }
  const byId = new Map<string, NpmPackage>();
  for (const [key, input] of keys) {
    if (lockfile.packages[key]?.dev)
      throw new Error(
        `${key} is a devDependency, yet ${input} is bundled into the binary: move it to dependencies or stop importing it from src/`,
      );
    const pkg = entry(lockfile, key, `bundled from ${input}`, licenseOf(key));
    byId.set(`${pkg.name}@${pkg.version}`, pkg);
  }
  return [...byId.values()].sort((a, b) => compare(a.name, b.name) || compare(a.version, b.version));
}

/** Bun's runtime package for the target, from the lockfile; its version must be the compiling Bun's. */
export function runtimePackage(lockfile: Lockfile, target: string, bunVersion: string): NpmPackage {
  const name = BUN_RUNTIME_PACKAGE[target];
  if (!name) throw new Error(`no Bun runtime package is known for target ${target}`);
  const pkg = entry(lockfile, `node_modules/${name}`, `Bun's runtime for ${target}`);
  if (pkg.version !== bunVersion)
    throw new Error(
      `package-lock.json pins ${name} ${pkg.version}, but Bun ${bunVersion} compiles: run npm ci (Bun is pinned in devDependencies)`,
    );
  return pkg;
}

const npmJson = (p: NpmPackage): NpmPackage => ({
  name: p.name,
  version: p.version,
  integrity: p.integrity,
  ...(p.resolved ? { resolved: p.resolved } : {}),
  ...(p.license ? { license: p.license } : {}),
});

/** The facts with keys in a fixed order (they are embedded, so their bytes matter). */
export const orderedFacts = (f: BuildFacts): BuildFacts => ({
  version: f.version,
  revision: f.revision,
  built: f.built,
  repository: f.repository,
  license: f.license,
  target: f.target,
  command: f.command,
  bun: f.bun,
  lockfileSha256: f.lockfileSha256,
  runtime: npmJson(f.runtime),
  packages: f.packages.map(npmJson),
});

export const orderedDeb = (d: DebFacts): DebFacts => ({
  name: d.name,
  version: d.version,
  architecture: d.architecture,
  sha256: d.sha256,
  url: d.url,
  distro: d.distro,
});

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;

function strings(value: unknown, what: string, keys: string[], optional: string[] = []): void {
  if (!isRecord(value)) throw new Error(`${what} is not an object`);
  for (const k of keys) if (typeof value[k] !== "string") throw new Error(`${what}: ${k} is not a string`);
  for (const k of optional)
    if (value[k] !== undefined && typeof value[k] !== "string")
      throw new Error(`${what}: ${k} is not a string`);
}

const NPM_KEYS = ["name", "version", "integrity"];

/** Checks parsed JSON is BuildFacts (throws naming the field that is not). */
export function checkFacts(value: unknown): BuildFacts {
  const keys = [
    "version",
    "revision",
    "built",
    "repository",
    "license",
    "target",
    "command",
    "bun",
    "lockfileSha256",
  ];
  strings(value, "build facts", keys);
  const v = value as Record<string, unknown>;
  strings(v.runtime, "build facts: runtime", NPM_KEYS, ["resolved", "license"]);
  if (!Array.isArray(v.packages)) throw new Error("build facts: packages is not a list");
  for (const [i, p] of v.packages.entries())
    strings(p, `build facts: packages[${i}]`, NPM_KEYS, ["resolved", "license"]);
  return value as BuildFacts;
}

export function checkDeb(value: unknown): DebFacts {
  strings(value, "runtime package", ["name", "version", "architecture", "sha256", "url", "distro"]);
  return value as DebFacts;
}
