/**
 * The real node's images, made with the project's own image builders (src/image) from the static
 * binaries of test/node, and pushed with the project's own binary (`dist/aicr image push`):
 *
 *   pause:3.10            the sandbox image containerd pins (/pause, user 65535, as the upstream one)
 *   aicr-test/ticker:1    a workload: /ticker prints ticks, exits with a chosen status, handles SIGTERM
 *   aicr:local            the project's image (dist/aicr-image-<version>.tar, `npm run image`)
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildLayer } from "../../../../src/image/_layer.ts";
import { buildImage, buildLayout, layoutArchive } from "../../../../src/image/_layout.ts";

const ROOT = join(import.meta.dir, "../../../..");
export const AICR_BINARY = join(ROOT, "dist/aicr");

export const PAUSE_REPOSITORY = "pause";
export const PAUSE_TAG = "3.10";
export const TICKER_REPOSITORY = "aicr-test/ticker";
export const TICKER_TAG = "1";
export const AICR_REPOSITORY = "aicr";
export const AICR_TAG = "local";

/** A one-layer linux/amd64 image of one static binary at /<name>, as an OCI archive. */
export async function staticImageArchive(o: {
  binary: string;
  name: string;
  repository: string;
  tag: string;
  user: string;
  args?: string[];
}): Promise<Uint8Array> {
  const data = new Uint8Array(await Bun.file(o.binary).arrayBuffer());
  const layer = buildLayer([{ type: "file", path: o.name, mode: 0o755, data }]);
  const image = buildImage({
    platform: { os: "linux", architecture: "amd64" },
    entrypoint: [`/${o.name}`, ...(o.args ?? [])],
    env: ["PATH=/"],
    user: o.user,
    labels: {},
    layers: [{ layer, createdBy: `aicr test node: /${o.name} (test/node)` }],
    annotations: {},
  });
  return layoutArchive(
    buildLayout({
      images: [image],
      repository: o.repository,
      tag: o.tag,
      annotations: {},
      dockerImage: image,
    }),
  );
}

export interface PushTarget {
  /** 127.0.0.1:<port> */
  host: string;
  /** PEM file of the CA of a TLS registry; absent: plain http. */
  caFile?: string;
  user?: string;
  password?: string;
}

/** `dist/aicr image push <archive> <host>/<repository>:<tag>`; the pushed reference. */
export async function pushArchive(
  archive: string | Uint8Array,
  target: PushTarget,
  repository: string,
  tag: string,
): Promise<string> {
  let scratch: string | undefined;
  let file = archive as string;
  if (typeof archive !== "string") {
    scratch = mkdtempSync(join(tmpdir(), "aicr-node-image-"));
    file = join(scratch, "image.tar");
    writeFileSync(file, archive);
  }
  try {
    const ref = `${target.host}/${repository}:${tag}`;
    const argv = [AICR_BINARY, "image", "push", file, ref];
    if (target.caFile) argv.push("--ca-file", target.caFile);
    else argv.push("--plain-http");
    if (target.user) argv.push("--username", target.user, "--password-stdin");
    const proc = Bun.spawn(argv, {
      stdin: target.password !== undefined ? new TextEncoder().encode(target.password) : "ignore",
      stdout: "pipe",
      stderr: "pipe",
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: scratch ?? tmpdir(), NO_COLOR: "1" },
    });
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    if (code !== 0) throw new Error(`aicr image push ${ref} failed (${code}):\n${out}${err}`);
    return ref;
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}
