/**
 * One Debian package, fetched straight from the mirror and verified the way apt does it: InRelease
 * checked with gpgv against Debian's archive keyring, Packages.xz checked against InRelease's SHA256,
 * the .deb checked against Packages' SHA256. Everything is cached under ~/.cache/aicr/debian/ and
 * re-verified on every use, so a warm build needs no network and a tampered cache fails loudly.
 * AICR_DEBIAN_REFRESH=1 fetches InRelease again (to pick up a newer package).
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";
import { readTar, type TarMember } from "../../src/image/_tar.ts";

export const DEBIAN_CACHE = join(homedir(), ".cache/aicr/debian");
const KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg";
/** Point releases land in bookworm, security fixes in bookworm-security: the newer of the two wins. */
const SUITES = [
  { suite: "bookworm", mirror: "http://deb.debian.org/debian" },
  { suite: "bookworm-security", mirror: "http://deb.debian.org/debian-security" },
];

export interface DebPackage {
  name: string;
  version: string;
  architecture: string;
  suite: string;
  /** Path in the mirror's pool, e.g. pool/main/g/glibc/libc6_2.36-9+deb12u14_amd64.deb. */
  filename: string;
  /** Where it was fetched from: the mirror's URL of `filename`. */
  url: string;
  sha256: string;
  size: number;
  /** The verified .deb in the cache. */
  path: string;
}

const sha256 = (data: Uint8Array): string => createHash("sha256").update(data).digest("hex");

async function run(cmd: string[], what: string): Promise<Uint8Array> {
  const proc = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).bytes(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`${what} failed (${cmd[0]} exited ${code}): ${err.trim()}`);
  return out;
}

async function fetchBytes(url: string): Promise<Uint8Array> {
  const res = await fetch(url, { signal: AbortSignal.timeout(300_000) });
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

/** Writes through a temp file, so a reader (or a killed build) never leaves half a file in the cache. */
async function cache(path: string, data: Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(`${path}.${process.pid}.tmp`, data);
  await rename(`${path}.${process.pid}.tmp`, path);
}

const REFRESH_HINT = "AICR_DEBIAN_REFRESH=1 fetches a current InRelease";

/** A file whose sha256 and size are known: from the cache, else from the first URL that has it. */
async function verified(
  path: string,
  urls: string[],
  want: { sha256: string; size: number },
): Promise<Uint8Array> {
  const matches = (d: Uint8Array) => sha256(d) === want.sha256 && d.length === want.size;
  if (existsSync(path)) {
    const cached = new Uint8Array(await readFile(path));
    if (!matches(cached)) throw new Error(`${path} does not match its index (damaged cache: delete it)`);
    return cached;
  }
  const problems: string[] = [];
  for (const url of urls) {
    const data = await fetchBytes(url).catch((e: Error) => {
      problems.push(e.message);
      return undefined;
    });
    if (data && matches(data)) {
      await cache(path, data);
      return data;
    }
    if (data) problems.push(`${url}: sha256 or size differs from the index`);
  }
  throw new Error(`cannot fetch ${basename(path)}: ${problems.join("; ")} (${REFRESH_HINT})`);
}

/** The signed part of the suite's InRelease (gpgv writes only what the signature covers). */
async function release(suite: string, mirror: string): Promise<string> {
  const path = join(DEBIAN_CACHE, suite, "InRelease");
  const verify = async (file: string) =>
    new TextDecoder().decode(
      await run(["gpgv", "--quiet", "--keyring", KEYRING, "--output", "-", file], `verifying ${file}`),
    );
  let text: string;
  if (existsSync(path) && process.env.AICR_DEBIAN_REFRESH !== "1") text = await verify(path);
  else {
    const temp = `${path}.${process.pid}.new`;
    await cache(temp, await fetchBytes(`${mirror}/dists/${suite}/InRelease`));
    text = await verify(temp).catch(async (e) => {
      await rm(temp, { force: true });
      throw e;
    });
    await rename(temp, path); // cached only once its signature checked out
  }
  const codename = /^Codename: (.+)$/m.exec(text)?.[1];
  if (codename !== suite) throw new Error(`${path} is for ${codename}, not ${suite}`);
  return text;
}

/** The suite's Packages index for one architecture, checked against InRelease. */
async function packages(suite: string, mirror: string, arch: string): Promise<string> {
  const name = `main/binary-${arch}/Packages.xz`;
  const line = (await release(suite, mirror))
    .split("SHA256:")[1]
    ?.split("\n")
    .map((l) => l.trim().split(/\s+/))
    .find((f) => f[2] === name);
  if (!line) throw new Error(`${suite} InRelease lists no ${name}`);
  const [hash, size] = line as [string, string];
  const path = join(DEBIAN_CACHE, suite, `Packages-${arch}-${hash}.xz`);
  // by-hash first: the plain path can change between our InRelease and our download.
  const urls = [
    `${mirror}/dists/${suite}/main/binary-${arch}/by-hash/SHA256/${hash}`,
    `${mirror}/dists/${suite}/${name}`,
  ];
  await verified(path, urls, { sha256: hash, size: Number(size) });
  return new TextDecoder().decode(await run(["xz", "-dc", path], `decompressing ${path}`));
}

function stanza(index: string, name: string): Record<string, string> | undefined {
  const block = index.split(/\n\n+/).find((b) => b.startsWith(`Package: ${name}\n`));
  if (!block) return undefined;
  return Object.fromEntries(
    block.split("\n").flatMap((l) => {
      const m = /^([A-Za-z0-9-]+): (.*)$/.exec(l);
      return m ? [[m[1]!, m[2]!]] : [];
    }),
  );
}

const newer = async (a: string, b: string): Promise<boolean> =>
  Bun.spawn(["dpkg", "--compare-versions", a, "gt", b]).exited.then((code) => code === 0);

/** The highest version of the package across bookworm and bookworm-security, downloaded and verified. */
export async function debianPackage(name: string, arch: string): Promise<DebPackage> {
  let best: Omit<DebPackage, "path"> | undefined;
  for (const { suite, mirror } of SUITES) {
    const s = stanza(await packages(suite, mirror, arch), name);
    if (!s?.Version || !s.Filename || !s.SHA256) continue;
    if (best && !(await newer(s.Version, best.version))) continue;
    best = {
      name,
      version: s.Version,
      architecture: arch,
      suite,
      filename: s.Filename,
      url: `${mirror}/${s.Filename}`,
      sha256: s.SHA256,
      size: Number(s.Size),
    };
  }
  if (!best) throw new Error(`no ${name} for ${arch} in ${SUITES.map((s) => s.suite).join(", ")}`);
  const path = join(DEBIAN_CACHE, "pool", basename(best.filename));
  await verified(path, [best.url], best);
  return { ...best, path };
}

/** The package's control files (control.tar: control, md5sums, …), paths without the leading "./". */
export async function debControl(deb: string): Promise<TarMember[]> {
  const tar = await run(["dpkg-deb", "--ctrl-tarfile", deb], `unpacking ${deb}`);
  return readTar(tar).map((m) => ({ ...m, path: m.path.replace(/^\.\//, "").replace(/\/$/, "") }));
}

/** The package's files (data.tar), paths without the leading "./". */
export async function debFiles(deb: string): Promise<TarMember[]> {
  const tar = await run(["dpkg-deb", "--fsys-tarfile", deb], `unpacking ${deb}`);
  return readTar(tar).map((m) => ({ ...m, path: m.path.replace(/^\.\//, "").replace(/\/$/, "") }));
}
