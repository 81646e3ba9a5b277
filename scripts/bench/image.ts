/**
 * The agent image: `bun scripts/bench/image.ts [runs]`. Sizes per platform (compressed as stored,
 * uncompressed as unpacked) read from dist/aicr-image-<version>/, then medians of wall time and peak
 * RSS for `npm run image` with fresh binaries, `aicr image save`, and `aicr image push` of the
 * archive to Debian's docker-registry on loopback (TLS, htpasswd): a first push into an empty
 * repository and a repeated one (nothing uploaded). The supply chain too: `npm run image --key`,
 * `aicr image sign` of a copy of the unsigned archive, `aicr image verify` of that archive and of the
 * pushed image in the registry. Needs `npm run image` first; leaves dist/ unsigned. Asserts nothing.
 */
import { generateKeyPairSync } from "node:crypto";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRegistry } from "../../test/registry/registry.ts";

const root = join(import.meta.dir, "../..");
const pkg = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as { version: string };
const layout = join(root, "dist", `aicr-image-${pkg.version}`);
const archive = `${layout}.tar`;
const aicr = join(root, "dist/aicr");
const runs = Number(process.argv[2] ?? 5);

const blob = (d: string) => join(layout, "blobs", ...d.split(":"));
const json = async (d: string) => JSON.parse(await readFile(blob(d), "utf8"));
const mib = (n: number) => `${(n / 1024 / 1024).toFixed(2)} MiB`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

const top = JSON.parse(await readFile(join(layout, "index.json"), "utf8")).manifests[0];
const index = await json(top.digest);
console.log(`image ${top.digest} — archive ${mib(Bun.file(archive).size)}`);
for (const m of index.manifests) {
  const manifest = await json(m.digest);
  const compressed = manifest.layers.reduce((n: number, l: { size: number }) => n + l.size, 0);
  let unpacked = 0;
  for (const l of manifest.layers) unpacked += Bun.gunzipSync(await Bun.file(blob(l.digest)).bytes()).length;
  const per = manifest.layers.map((l: { size: number }) => mib(l.size)).join(" + ");
  console.log(
    `${m.platform.os}/${m.platform.architecture}: compressed ${mib(compressed)} (${per}), uncompressed ${mib(unpacked)}`,
  );
}

async function timed(argv: string[], stdin?: string): Promise<{ ms: number; rss: number }> {
  const start = Bun.nanoseconds();
  const proc = Bun.spawn(argv, {
    cwd: root,
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "ignore",
    stderr: "pipe",
  });
  const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${argv.join(" ")} exited ${code}: ${err}`);
  return { ms: (Bun.nanoseconds() - start) / 1e6, rss: (proc.resourceUsage()?.maxRSS ?? 0) / 1024 / 1024 };
}

function report(what: string, xs: { ms: number; rss: number }[]): void {
  const ms = median(xs.map((x) => x.ms));
  const rss = median(xs.map((x) => x.rss));
  console.log(
    `${what}: median ${(ms / 1000).toFixed(2)} s, peak RSS ${rss.toFixed(0)} MiB (${xs.length} runs)`,
  );
}

const build: { ms: number; rss: number }[] = [];
for (let i = 0; i < Math.min(runs, 3); i++) build.push(await timed([process.execPath, "scripts/image.ts"]));
report("npm run image (binaries fresh, caches warm)", build);

const work = mkdtempSync(join(tmpdir(), "aicr-bench-image-"));
const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
const key = join(work, "bench.key");
const pub = join(work, "bench.pub");
writeFileSync(key, pair.privateKey.export({ format: "pem", type: "sec1" }), { mode: 0o600 });
writeFileSync(pub, pair.publicKey.export({ format: "pem", type: "spki" }));
const unsigned = join(work, "unsigned.tar");
copyFileSync(archive, unsigned);
const sign: { ms: number; rss: number }[] = [];
for (let i = 0; i < runs; i++) {
  const copy = join(work, `signed-${i}.tar`);
  copyFileSync(unsigned, copy);
  sign.push(await timed([aicr, "image", "sign", copy, "--key", key]));
}
report("aicr image sign (both platforms: 7 signatures)", sign);
const verifyArchive: { ms: number; rss: number }[] = [];
for (let i = 0; i < runs; i++)
  verifyArchive.push(await timed([aicr, "image", "verify", join(work, "signed-0.tar"), "--key", pub]));
report("aicr image verify <archive> (9 checks)", verifyArchive);
const signedBuild: { ms: number; rss: number }[] = [];
for (let i = 0; i < Math.min(runs, 3); i++)
  signedBuild.push(await timed([process.execPath, "scripts/image.ts", "--key", key]));
report("npm run image --key (binaries fresh, caches warm)", signedBuild);

const save: { ms: number; rss: number }[] = [];
for (let i = 0; i < runs; i++)
  save.push(await timed([aicr, "image", "save", "-o", join(work, `save-${i}.tar`)]));
report("aicr image save", save);

const password = "bench-Secret-1";
const registry = await startRegistry({ tls: true, htpasswd: { user: "bench", password } });
try {
  /** `aicr image <verb> …` against the registry, logged in with --password-stdin. */
  const withRegistry = (verb: string, ...args: string[]) =>
    timed(
      [aicr, "image", verb, ...args, "--ca-file", registry.caFile, "--username", "bench", "--password-stdin"],
      `${password}\n`,
    );
  const push = (repo: string) => withRegistry("push", archive, `${registry.host}/${repo}`);
  const first: { ms: number; rss: number }[] = [];
  const again: { ms: number; rss: number }[] = [];
  for (let i = 0; i < runs; i++) {
    first.push(await push(`bench/first-${i}`));
    again.push(await push(`bench/first-${i}`));
  }
  report("aicr image push (signed, 11 referrers), empty repository", first);
  report("aicr image push, again (nothing uploaded)", again);
  const verifyRegistry: { ms: number; rss: number }[] = [];
  for (let i = 0; i < runs; i++)
    verifyRegistry.push(
      await withRegistry("verify", `${registry.host}/bench/first-0:v${pkg.version}`, "--key", pub),
    );
  report("aicr image verify <registry>/<repository>:<tag> (9 checks, tag scheme)", verifyRegistry);
} finally {
  await registry.stop();
  rmSync(work, { recursive: true, force: true });
  // dist/ as the tests expect it: unsigned
  await timed([process.execPath, "scripts/image.ts"]);
}
