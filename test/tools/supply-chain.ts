/**
 * What the supply-chain tests share: running a tool, P-256 key pairs made with openssl, cosign's
 * offline flags, the image archive signed and its referrer graph, and archives altered the ways an
 * attacker would (a layer's bytes, a swapped SBOM) for `aicr image verify` to refuse.
 */
import { test } from "bun:test";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type OciArchive, readOciArchive } from "../../src/image/_archive.ts";
import { appendReferrers, layoutArchive } from "../../src/image/_layout.ts";
import { blobPath, canonicalJson, type Descriptor, type Index, type Manifest } from "../../src/image/_oci.ts";
import { ARTIFACT, buildArtifact } from "../../src/image/_referrers.ts";
import { readTar } from "../../src/image/_tar.ts";
import { aicr, ensureBuilt } from "../e2e/_aicr.ts";
import { ARCHIVE, ensureImage, VERSION } from "../image/_image.ts";
import { startRegistry } from "../registry/registry.ts";
import { startReferrersRegistry, tool } from "./tools.ts";

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `argv` with only `env` (plus PATH): nothing from the developer's shell (DOCKER_CONFIG, HOME) leaks in. */
export async function run(
  argv: string[],
  o: { cwd?: string; env?: Record<string, string> } = {},
): Promise<Run> {
  const proc = Bun.spawn(argv, {
    cwd: o.cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...o.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/** `run`, throwing with the tool's output unless it exits 0. */
export async function ok(
  argv: string[],
  o: { cwd?: string; env?: Record<string, string> } = {},
): Promise<Run> {
  const r = await run(argv, o);
  if (r.code !== 0) throw new Error(`${argv.join(" ")} exited ${r.code}:\n${r.stdout}${r.stderr}`);
  return r;
}

export interface KeyPair {
  key: string;
  pub: string;
}

/** An ECDSA P-256 key (SEC1 "EC PRIVATE KEY") and its public key (SPKI "PUBLIC KEY"), by openssl, in `dir`. */
export async function opensslKeyPair(dir: string, name: string): Promise<KeyPair> {
  const key = join(dir, `${name}.pem`);
  const pub = join(dir, `${name}.pub`);
  await ok(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key]);
  await ok(["openssl", "ec", "-in", key, "-pubout", "-out", pub]);
  return { key, pub };
}

/**
 * cosign with a public key and nothing online: no transparency log (--insecure-ignore-tlog), and
 * never a request for Sigstore's public roots (TUF), which cosign makes unless told what to trust —
 * `verify` by an empty trusted root; `verify-blob` (where --trusted-root needs the new bundle
 * format) by naming a CT log key file, which key-based verification never reads (the file does not
 * exist, so a read would fail the test). HOME is `dir`: no ~/.sigstore or docker login is read.
 */
export function cosignOffline(dir: string): {
  env: Record<string, string>;
  verify: string[];
  verifyBlob: string[];
} {
  const root = join(dir, "trusted_root.json");
  writeFileSync(root, '{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1"}\n');
  return {
    env: {
      HOME: dir,
      TUF_ROOT: join(dir, "tuf"),
      DOCKER_CONFIG: join(dir, "docker"),
      SIGSTORE_CT_LOG_PUBLIC_KEY_FILE: join(dir, "no-ct-log-key.pem"),
    },
    verify: ["--insecure-ignore-tlog", "--trusted-root", root],
    verifyBlob: ["--insecure-ignore-tlog"],
  };
}

/** `cp <archive> <to>` then `aicr image sign <to> --key <key>`; throws unless it signs. */
export async function signedCopy(archive: string, to: string, key: string, env?: Record<string, string>) {
  copyFileSync(archive, to);
  const r = await aicr(["image", "sign", to, "--key", key], env ? { env } : {});
  if (r.code !== 0) throw new Error(`aicr image sign ${to} exited ${r.code}:\n${r.stdout}${r.stderr}`);
  return r;
}

/** What a signed archive holds, by role: the root, its platform manifests, and each one's referrers. */
export interface Graph {
  oci: OciArchive;
  root: Descriptor;
  platforms: { arch: string; descriptor: Descriptor }[];
  /** Referrers of `digest`: descriptor digest → artifactType. */
  referrersOf(digest: string): Map<string, string>;
  /** The one referrer of `digest` with `artifactType` (throws when there is not exactly one). */
  only(digest: string, artifactType: string): Descriptor;
}

export function graphOf(bytes: Uint8Array): Graph {
  const oci = readOciArchive(bytes);
  const root = oci.roots[0] as Descriptor;
  const platforms = oci.images
    .filter((i) => i.descriptor.platform)
    .map((i) => ({ arch: i.descriptor.platform?.architecture as string, descriptor: i.descriptor }));
  if (platforms.length === 0) platforms.push({ arch: "?", descriptor: root });
  return {
    oci,
    root,
    platforms,
    referrersOf: (digest) =>
      new Map(oci.referrersOf(digest).map((r) => [r.descriptor.digest, String(r.descriptor.artifactType)])),
    only(digest, artifactType) {
      const found = oci.referrersOf(digest).filter((r) => r.descriptor.artifactType === artifactType);
      if (found.length !== 1)
        throw new Error(`${digest} has ${found.length} referrers of type ${artifactType}, expected 1`);
      return (found[0] as { descriptor: Descriptor }).descriptor;
    },
  };
}

/** The archive's files by path, and a writer of an altered copy (index.json as given). */
function filesOf(bytes: Uint8Array): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  for (const m of readTar(bytes)) if (m.type === "file") files.set(m.path.replace(/^\.\//, ""), m.data);
  return files;
}

/** The archive with one byte of blob `digest` flipped (its last byte), nothing else changed. */
export function withFlippedBlob(bytes: Uint8Array, digest: string): Uint8Array {
  const files = filesOf(bytes);
  const path = blobPath(digest);
  const data = files.get(path);
  if (!data) throw new Error(`no blob ${digest} in the archive`);
  const altered = new Uint8Array(data);
  altered[altered.length - 1] = (altered[altered.length - 1] as number) ^ 0xff;
  files.set(path, altered);
  return layoutArchive({ files: [...files].map(([p, d]) => ({ path: p, data: d })) });
}

/**
 * The archive without the referrers `drop` (digests) in index.json — their blobs stay, as an
 * attacker who re-points an image's SBOM leaves them. Referrers of the dropped ones (their
 * signatures) go too.
 */
export function withoutReferrers(bytes: Uint8Array, drop: readonly string[]): Uint8Array {
  const oci = readOciArchive(bytes);
  const gone = new Set(drop);
  for (const r of oci.referrers)
    if (gone.has(String(r.manifest.subject?.digest))) gone.add(r.descriptor.digest);
  const files = filesOf(bytes);
  const index: Index = { ...oci.index, manifests: oci.index.manifests.filter((d) => !gone.has(d.digest)) };
  files.set("index.json", canonicalJson(index));
  return layoutArchive({ files: [...files].map(([p, d]) => ({ path: p, data: d })) });
}

/** The archive without its signature referrers (the same bytes when it has none). */
export function withoutSignatures(bytes: Uint8Array): Uint8Array {
  const sigs = readOciArchive(bytes)
    .referrers.filter((r) => r.descriptor.artifactType === ARTIFACT.cosignSignature)
    .map((r) => r.descriptor.digest);
  return sigs.length === 0 ? bytes : withoutReferrers(bytes, sigs);
}

/**
 * The archive with `victim`'s SBOM replaced by `donor`'s (another platform manifest's SBOM document,
 * its layer and annotations as they were) attached to `victim`: what a mix-up or an attacker re-pointing
 * SBOMs gives. The replaced SBOM and its signatures are gone from index.json; the new one is unsigned.
 */
export function withSwappedSbom(bytes: Uint8Array, victim: Descriptor, donor: string): Uint8Array {
  const g = graphOf(bytes);
  const donorSbom = g.only(donor, ARTIFACT.spdx);
  const manifest = JSON.parse(new TextDecoder().decode(g.oci.blob(donorSbom.digest))) as Manifest;
  const layer = manifest.layers[0] as Descriptor;
  const swapped = buildArtifact({
    artifactType: ARTIFACT.spdx,
    subject: victim,
    layers: [
      {
        mediaType: layer.mediaType,
        data: g.oci.blob(layer.digest) as Uint8Array,
        annotations: layer.annotations,
      },
    ],
    annotations: manifest.annotations,
  });
  return appendReferrers(withoutReferrers(bytes, [g.only(victim.digest, ARTIFACT.spdx).digest]), [swapped]);
}

/** A registry the signed image was pushed to, and how it keeps referrers. */
export interface Target {
  label: string;
  via: "tag-scheme" | "api";
  host: string;
  /** <host>/aicr */
  repository: string;
}

export interface Pushed {
  work: string;
  keys: KeyPair;
  /** dist's archive without signatures (a copy in `work`). */
  unsigned: string;
  /** That, signed by `keys`. */
  signed: string;
  graph: Graph;
  /** Debian's docker-registry 2.8 (tag scheme), and go-containerregistry's (referrers API) when it built. */
  targets: Target[];
  /** Why the referrers-API registry is not among the targets. */
  apiMissing?: string | undefined;
  stop(): Promise<void>;
}

/**
 * One test per registry of `pushed()` (read when the test runs, after beforeAll): Debian's
 * docker-registry 2.8 (tag scheme) and go-containerregistry's (referrers API), `fn` given its target.
 */
export function eachTarget(pushed: () => Pushed, name: string, fn: (t: Target) => Promise<void>): void {
  test.each([["docker-registry 2.8", "tag-scheme"] as const, ["go-containerregistry", "api"] as const])(
    `${name} — %s (%s)`,
    async (_label, via) => {
      const p = pushed();
      const t = p.targets.find((x) => x.via === via);
      if (!t) throw new Error(`the referrers-API registry is missing: ${p.apiMissing}`);
      await fn(t);
    },
  );
}

/**
 * dist/aicr-image-<version>.tar (npm run image) copied, signed with a fresh openssl key by `aicr image
 * sign`, and pushed by `aicr image push --plain-http` as <host>/aicr:v<version> to both test registries.
 */
export async function pushedImage(): Promise<Pushed> {
  await Promise.all([ensureBuilt(), ensureImage()]);
  const work = mkdtempSync(join(tmpdir(), "aicr-supply-chain-"));
  const stops: (() => Promise<void>)[] = [async () => rmSync(work, { recursive: true, force: true })];
  const stop = async () => {
    for (const s of stops.reverse()) await s();
  };
  try {
    const keys = await opensslKeyPair(work, "publisher");
    // dist's archive is signed when npm run image had a key: start from its unsigned form
    const unsigned = join(work, "unsigned.tar");
    writeFileSync(unsigned, withoutSignatures(new Uint8Array(readFileSync(ARCHIVE))));
    const signed = join(work, "signed.tar");
    await signedCopy(unsigned, signed, keys.key);
    const graph = graphOf(new Uint8Array(readFileSync(signed)));
    const targets: Target[] = [];
    const docker = await startRegistry();
    stops.push(() => docker.stop());
    targets.push({
      label: "docker-registry 2.8",
      via: "tag-scheme",
      host: docker.host,
      repository: `${docker.host}/aicr`,
    });
    const api = await tool("registry");
    if (api.path) {
      const reg = await startReferrersRegistry();
      stops.push(() => reg.stop());
      targets.push({
        label: "go-containerregistry",
        via: "api",
        host: reg.host,
        repository: `${reg.host}/aicr`,
      });
    }
    for (const t of targets) {
      const r = await aicr(["image", "push", signed, `${t.repository}:v${VERSION}`, "--plain-http"]);
      if (r.code !== 0) throw new Error(`aicr image push to ${t.label} exited ${r.code}:\n${r.stderr}`);
      const via = t.via === "api" ? "referrers API" : "tag scheme";
      if (!r.stderr.includes(`(${via})`))
        throw new Error(`the push to ${t.label} did not use the ${via}:\n${r.stderr}`);
    }
    return { work, keys, unsigned, signed, graph, targets, apiMissing: api.missing, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
