/**
 * The air-gapped operator's flow, end to end, with nothing but the two files they copy: the image
 * archive goes into a private registry with `aicr image push` (TLS with a private CA, htpasswd
 * auth), and `aicr snapshot --image <that registry>/aicr:v<version>` runs the agent from it. The
 * test kubelets pull the image from the registry (skopeo, digests verified), unpack its layers and
 * run its entrypoint chrooted into the image's own files — so the snapshot proves the image works.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readOciArchive } from "../../src/image/_archive.ts";
import type { Manifest } from "../../src/image/_oci.ts";
import { parseSnapshot } from "../../src/snapshot/schema.ts";
import { processRuntime } from "../cluster/controllers/process-runtime.ts";
import { registryPuller } from "../cluster/images/pull.ts";
import { node } from "../cluster/nodes.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { ARCHIVE, ensureImage, IS_ROOT, VERSION } from "../image/_image.ts";
import { type Registry, startRegistry } from "../registry/registry.ts";
import {
  freshNamespace,
  runIdOf,
  runSnapshot,
  SETUP_MS,
  TEST_MS,
  untilNoRunObjects,
} from "../snapshot/_harness.ts";
import { useCluster } from "../support/cluster.ts";
import { aicr, baseEnv, ensureBuilt } from "./_aicr.ts";

const USER = "operator";
const PASSWORD = "air-gap-Secret-7";

describe.skipIf(!IS_ROOT)("air-gapped installation (chroot needs root)", () => {
  let registry: Registry;
  let image: string;
  /** The kubelets' image cache, the skopeo cert dir and each push's HOME; removed with the suite. */
  let work: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "aicr-air-gap-"));
    await Promise.all([ensureBuilt(), ensureImage()]);
    registry = await startRegistry({ tls: true, htpasswd: { user: USER, password: PASSWORD } });
    image = `${registry.host}/platform/aicr:v${VERSION}`;
  }, SETUP_MS);
  afterAll(async () => {
    await registry?.stop();
    rmSync(work, { recursive: true, force: true });
  }, SETUP_MS);

  const login = ["--ca-file", "", "--username", USER, "--password-stdin"];
  const withLogin = () => login.map((a) => a || registry.caFile);

  test(
    "aicr image push: the index digest on stdout; pushed again, nothing is uploaded",
    async () => {
      const first = await push(registry, work, "platform/aicr", withLogin());
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toMatch(new RegExp(`^${registry.host}/platform/aicr@sha256:[0-9a-f]{64}\n$`));
      expect(first.stderr).toMatch(/uploaded [1-9]\d* blobs/);
      const again = await push(registry, work, "platform/aicr", withLogin());
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toBe(first.stdout);
      expect(again.stderr).toContain("uploaded 0 blobs (0 B)");
    },
    TEST_MS,
  );

  test(
    "skopeo copies the archive's image into the registry; aicr image push of it then uploads only the referrers' blobs",
    async () => {
      const certs = mkdtempSync(join(work, "certs-"));
      await Bun.write(join(certs, "ca.crt"), Bun.file(registry.caFile));
      const copy = Bun.spawnSync([
        "skopeo",
        "copy",
        "--all",
        "--preserve-digests",
        "--dest-cert-dir",
        certs,
        "--dest-creds",
        `${USER}:${PASSWORD}`,
        `oci-archive:${ARCHIVE}:v${VERSION}`,
        `docker://${registry.host}/skopeo/aicr:v${VERSION}`,
      ]);
      expect(copy.exitCode, copy.stderr.toString()).toBe(0);
      const r = await push(registry, work, "skopeo/aicr", withLogin());
      expect(r.code, r.stderr).toBe(0);
      // skopeo copies the tagged image only; the SBOMs, provenance and signatures go up with aicr's push
      const oci = readOciArchive(new Uint8Array(readFileSync(ARCHIVE)));
      const blobsOf = (m: Manifest) => [m.config.digest, ...m.layers.map((l) => l.digest)];
      const imageBlobs = new Set(oci.images.flatMap((i) => blobsOf(i.manifest)));
      const referrerBlobs = new Set(
        oci.referrers.flatMap((r) => blobsOf(r.manifest)).filter((d) => !imageBlobs.has(d)),
      );
      expect(r.stderr).toContain(`uploaded ${referrerBlobs.size} blobs`);
      expect(r.stderr).toContain(`skipped ${imageBlobs.size} already present`);
    },
    TEST_MS,
  );

  test("without credentials the registry refuses the push: exit 4 and a remedy", async () => {
    const r = await push(registry, work, "platform/aicr", ["--ca-file", registry.caFile]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain("UNAUTHORIZED");
    expect(r.stderr).toContain("remedy:");
  });

  for (const backend of BACKENDS)
    describe(`[${backend}]`, () => {
      const cluster = useCluster(backend, {
        nodes: [node("gpu-node-1", { gpus: 8 }), node("cpu-node-1")],
        runtime: (api) =>
          processRuntime({
            images: {},
            pull: registryPuller(
              { host: registry.host, caFile: registry.caFile, username: USER, password: PASSWORD },
              join(work, `images-${backend}`),
            ),
            kubeconfigForServiceAccount: api.kubeconfigForServiceAccount,
            baseEnv: { NO_COLOR: "1" },
          }),
      });

      test(
        "aicr snapshot --image <private registry>/aicr:v<version>: the agent runs from the pushed image",
        async () => {
          const ns = await freshNamespace(cluster(), "air-gap");
          const r = await runSnapshot(cluster().kubeconfigFor("admin"), ["-n", ns, "--image", image]);
          expect(r.code, r.stderr).toBe(0);
          const doc = parseSnapshot(r.stdout, "stdout");
          expect(doc.metadata["run-id"]).toBe(runIdOf(r.stderr));
          expect(doc.metadata.version).toBe(VERSION);
          expect(doc.metadata["source-node"]).toBe("gpu-node-1");
          await untilNoRunObjects(cluster(), ns);
        },
        TEST_MS,
      );

      test(
        "a tag the private registry does not have: ErrImagePull from the kubelet, the run fails fast (exit 3)",
        async () => {
          const ns = await freshNamespace(cluster(), "air-gap-typo");
          const wrong = `${registry.host}/platform/aicr:v0.0.0-typo`;
          const r = await runSnapshot(cluster().kubeconfigFor("admin"), ["-n", ns, "--image", wrong]);
          expect(r.code, r.stderr).toBe(3);
          expect(r.stderr).toContain(`the agent image "${wrong}" cannot be pulled: ErrImagePull`);
          expect(r.stderr).toContain("remedy: check --image");
          await untilNoRunObjects(cluster(), ns);
        },
        TEST_MS,
      );
    });
});

/**
 * `aicr image push <archive> <registry>/<repository> <flags>`, the password (if asked for) on stdin,
 * with a fresh HOME under `work` (no credentials from an earlier push).
 */
function push(registry: Registry, work: string, repository: string, flags: string[]) {
  const env = baseEnv({ HOME: mkdtempSync(join(work, "home-")) });
  return aicr(["image", "push", ARCHIVE, `${registry.host}/${repository}`, ...flags], {
    env,
    stdin: `${PASSWORD}\n`,
  });
}
