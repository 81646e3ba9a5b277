/**
 * The test kubelets' image store: resolves a reference in a registry with Debian's skopeo (tag →
 * the manifest for this machine's platform, every blob's digest verified), checks the blobs again
 * itself, unpacks the layers in order into a root filesystem, and reads the entrypoint, env and user
 * from the image config. Pulls run one at a time into one shared OCI layout, so a second pull of the
 * same image fetches no blob; each manifest is unpacked once.
 *
 * Simplifications (fidelity): layers are unpacked with tar (no whiteout handling — aicr's images
 * have none); a pull failure surfaces as the container's failure, not as ErrImagePull.
 */
import { createHash } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import { mkdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";

export interface PulledImage {
  reference: string;
  /** The platform manifest's digest. */
  digest: string;
  rootfs: string;
  entrypoint: string[];
  cmd: string[];
  env: string[];
  user?: string;
  workingDir?: string;
}

export interface RegistryAccess {
  /** host:port of the registry whose references this store pulls. */
  host: string;
  /** PEM file of the CA that signed the registry's certificate (skopeo wants a directory: made here). */
  caFile?: string;
  username?: string;
  password?: string;
}

export type ImagePuller = (image: string) => Promise<PulledImage> | undefined;

const PLATFORM_ARCH: Record<string, string> = { x64: "amd64", arm64: "arm64" };

async function run(argv: string[]): Promise<string> {
  const proc = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`${argv[0]} ${argv[1]} failed (${code}): ${err.trim()}`);
  return out;
}

async function fileDigest(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return `sha256:${hash.digest("hex")}`;
}

const json = async <T>(path: string): Promise<T> => JSON.parse(await readFile(path, "utf8")) as T;

/** An image store over `cacheDir` for the references that name `access.host`. */
export function registryPuller(access: RegistryAccess, cacheDir: string): ImagePuller {
  const layout = join(cacheDir, "layout");
  const unpacked = new Map<string, Promise<string>>();
  let queue: Promise<unknown> = Promise.resolve();

  const certDir = async (): Promise<string[]> => {
    if (!access.caFile) return [];
    const dir = join(cacheDir, "certs");
    await mkdir(dir, { recursive: true });
    await Bun.write(join(dir, "ca.crt"), Bun.file(access.caFile));
    return ["--src-cert-dir", dir];
  };

  const unpack = (digest: string, layers: string[]): Promise<string> => {
    const known = unpacked.get(digest);
    if (known) return known;
    const job = (async () => {
      const rootfs = join(cacheDir, "rootfs", digest.replace(":", "-"));
      if (existsSync(rootfs)) return rootfs;
      const tmp = `${rootfs}.partial`;
      await rm(tmp, { recursive: true, force: true });
      await mkdir(tmp, { recursive: true });
      for (const layer of layers) await run(["tar", "-xzf", layer, "-C", tmp, "--no-same-owner"]);
      await rename(tmp, rootfs);
      return rootfs;
    })();
    unpacked.set(digest, job);
    return job;
  };

  const pull = async (image: string): Promise<PulledImage> => {
    const tag = `ref-${Bun.hash(image).toString(16)}`;
    const creds = access.username ? ["--src-creds", `${access.username}:${access.password ?? ""}`] : [];
    const arch = PLATFORM_ARCH[process.arch] ?? process.arch;
    await mkdir(cacheDir, { recursive: true });
    await run([
      "skopeo",
      "copy",
      "--quiet",
      "--override-os",
      "linux",
      "--override-arch",
      arch,
      ...(await certDir()),
      ...creds,
      `docker://${image}`,
      `oci:${layout}:${tag}`,
    ]);
    const index = await json<{ manifests: { digest: string; annotations?: Record<string, string> }[] }>(
      join(layout, "index.json"),
    );
    const entry = index.manifests.find((m) => m.annotations?.["org.opencontainers.image.ref.name"] === tag);
    if (!entry) throw new Error(`skopeo wrote no manifest for ${image}`);
    const blob = (d: string) => join(layout, "blobs", ...d.split(":"));
    const check = async (d: string) => {
      const actual = await fileDigest(blob(d));
      if (actual !== d) throw new Error(`blob ${d} of ${image} has digest ${actual}`);
    };
    await check(entry.digest);
    const manifest = await json<{ config: { digest: string }; layers: { digest: string }[] }>(
      blob(entry.digest),
    );
    for (const d of [manifest.config.digest, ...manifest.layers.map((l) => l.digest)]) await check(d);
    const config = await json<{
      config?: { Entrypoint?: string[]; Cmd?: string[]; Env?: string[]; User?: string; WorkingDir?: string };
    }>(blob(manifest.config.digest));
    const rootfs = await unpack(
      entry.digest,
      manifest.layers.map((l) => blob(l.digest)),
    );
    const c = config.config ?? {};
    return {
      reference: image,
      digest: entry.digest,
      rootfs,
      entrypoint: c.Entrypoint ?? [],
      cmd: c.Cmd ?? [],
      env: c.Env ?? [],
      ...(c.User ? { user: c.User } : {}),
      ...(c.WorkingDir ? { workingDir: c.WorkingDir } : {}),
    };
  };

  return (image) => {
    if (!image.startsWith(`${access.host}/`)) return undefined;
    const next = queue.then(() => pull(image));
    queue = next.catch(() => {});
    return next;
  };
}
