/**
 * Everything one real node needs around it: the registries it pulls from and the images in them,
 * then the node itself (node.ts).
 *
 *   registry         Debian's docker-registry on 127.0.0.1, plain http, anonymous: pause:3.10,
 *                    aicr-test/ticker:1 and (with `aicrImage`) the project's image as aicr:local
 *   privateRegistry  a second one, TLS (the test CA) with htpasswd: private/ticker:1 — a pull needs
 *                    credentials (imagePullSecrets); without them the pod ends in ErrImagePull
 *
 * Both are pushed to with the project's own binary (dist/aicr image push). The node reaches them at the
 * same 127.0.0.1:<port> as this host (node.ts relays the ports), so one image reference works here and
 * there. They run under the node's supervisor and end with it.
 */
import { existsSync } from "node:fs";
import { nodeBinaries } from "../../../node/build.ts";
import {
  AICR_BINARY,
  AICR_REPOSITORY,
  AICR_TAG,
  PAUSE_REPOSITORY,
  PAUSE_TAG,
  pushArchive,
  staticImageArchive,
  TICKER_REPOSITORY,
  TICKER_TAG,
} from "./images.ts";
import { type NodeRegistry, type RealNode, startRealNode } from "./node.ts";

export interface RealNodeSpec {
  /** The Node's name. */
  name: string;
  /** Fake GPUs (default 8). */
  gpus?: number;
  labels?: Record<string, string>;
  /** A real systemd's `<runDir>/systemd`, bound at the node's /run/systemd. */
  systemdDir?: string;
  /** Push the project's image (npm run image's archive, built when stale) as <registry>/aicr:local. */
  aicrImage?: boolean;
  verbosity?: number;
}

export interface RealNodeStack {
  node: RealNode;
  registry: { host: string; url: string };
  privateRegistry: Required<NodeRegistry>;
  images: {
    pause: string;
    ticker: string;
    /** In the private registry: needs imagePullSecrets. */
    privateTicker: string;
    /** The project's image, when `aicrImage` was asked for. */
    aicr?: string;
  };
  stop(): Promise<void>;
}

export async function startRealNodeStack(
  spec: RealNodeSpec,
  cluster: { apiserverPort: number; servicePort: number },
): Promise<RealNodeStack> {
  if (!existsSync(AICR_BINARY))
    throw new Error(`${AICR_BINARY} is missing: npm run build (the real node's images are pushed with it)`);
  const bin = await nodeBinaries();
  const password = crypto.randomUUID();
  // The registries run under the node's supervisor, so they end with the node; the images are pushed
  // once they answer (nothing pulls before the first pod).
  const node = await startRealNode({
    name: spec.name,
    ...(spec.gpus !== undefined ? { gpus: spec.gpus } : {}),
    ...(spec.labels ? { labels: spec.labels } : {}),
    ...(spec.systemdDir ? { systemdDir: spec.systemdDir } : {}),
    ...(spec.verbosity !== undefined ? { verbosity: spec.verbosity } : {}),
    apiserverPort: cluster.apiserverPort,
    servicePort: cluster.servicePort,
    registries: [{}, { tls: true, htpasswd: { user: "puller", password } }],
    sandboxImage: { registry: 0, name: `${PAUSE_REPOSITORY}:${PAUSE_TAG}` },
  });
  try {
    const [registry, privateRegistry] = node.registries as [NodeRegistry, Required<NodeRegistry>];
    const tickerArchive = await staticImageArchive({
      binary: bin.ticker,
      name: "ticker",
      repository: TICKER_REPOSITORY,
      tag: TICKER_TAG,
      user: "65534:65534",
    });
    const [pause, ticker, privateTicker, aicr] = await Promise.all([
      staticImageArchive({
        binary: bin.pause,
        name: "pause",
        repository: PAUSE_REPOSITORY,
        tag: PAUSE_TAG,
        user: "65535:65535",
      }).then((a) => pushArchive(a, registry, PAUSE_REPOSITORY, PAUSE_TAG)),
      pushArchive(tickerArchive, registry, TICKER_REPOSITORY, TICKER_TAG),
      pushArchive(tickerArchive, privateRegistry, `private/${TICKER_REPOSITORY}`, TICKER_TAG),
      spec.aicrImage ? pushProjectImage(registry) : Promise.resolve(undefined),
    ]);
    return {
      node,
      registry: { host: registry.host, url: registry.url },
      privateRegistry,
      images: { pause, ticker, privateTicker, ...(aicr ? { aicr } : {}) },
      stop: () => node.stop(),
    };
  } catch (e) {
    await node.stop();
    throw e;
  }
}

/** The project's image archive (rebuilt by npm run image when older than the sources), as aicr:local. */
async function pushProjectImage(target: { host: string }): Promise<string> {
  const { ensureImage, ARCHIVE } = await import("../../../image/_image.ts");
  await ensureImage();
  return pushArchive(ARCHIVE, target, AICR_REPOSITORY, AICR_TAG);
}
