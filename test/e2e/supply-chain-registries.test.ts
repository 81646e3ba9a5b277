/**
 * The ecosystem's registry clients read what `aicr image push` put in a registry: oras discovers
 * each manifest's SBOM, provenance and signatures (and the signatures of those), crane reads the
 * referrers tag scheme's indexes, the referrer manifests byte for byte and cosign's legacy `.sig`
 * tags, and `oras pull` / `crane blob` give back the very SBOM and provenance files in dist/.
 * Against Debian's docker-registry 2.8 (no referrers API: the tag scheme) and go-containerregistry's
 * registry with the referrers API (test/tools/registry). oras also reads the archive itself (an OCI
 * layout in a tar) before anything is pushed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Index, Manifest } from "../../src/image/_oci.ts";
import { ARTIFACT, COSIGN_SIGNATURE_ANNOTATION, TITLE_ANNOTATION } from "../../src/image/_referrers.ts";
import { DIST, VERSION } from "../image/_image.ts";
import {
  eachTarget,
  type Graph,
  ok,
  type Pushed,
  pushedImage,
  run,
  type Target,
} from "../tools/supply-chain.ts";
import { tool } from "../tools/tools.ts";

const SETUP_MS = 180_000;
const crane = await tool("crane");
const oras = await tool("oras");
const missing = [crane.missing, oras.missing].filter(Boolean).join("; ");

interface Node {
  digest: string;
  artifactType: string;
  referrers: Node[];
}
const byDigest = (a: { digest: string }, b: { digest: string }) => (a.digest < b.digest ? -1 : 1);

/** The referrer tree of `digest` as the archive's index.json holds it. */
const treeOf = (g: Graph, digest: string): Node[] =>
  [...g.referrersOf(digest)]
    .map(([d, artifactType]) => ({ digest: d, artifactType, referrers: treeOf(g, d) }))
    .sort(byDigest);

/** oras discover --format json's tree, in the same shape. */
const orasTree = (nodes: { digest: string; artifactType: string; referrers?: unknown[] }[]): Node[] =>
  nodes
    .map((n) => ({
      digest: n.digest,
      artifactType: n.artifactType,
      referrers: orasTree((n.referrers ?? []) as typeof nodes),
    }))
    .sort(byDigest);

const tagOf = (digest: string) => digest.replace(":", "-");

describe.skipIf(missing !== "")(
  `oras and crane read the pushed referrers${missing ? ` (skipped: ${missing})` : ""}`,
  () => {
    let p: Pushed;
    let home: string;
    beforeAll(async () => {
      p = await pushedImage();
      home = join(p.work, "home");
      mkdirSync(home);
    }, SETUP_MS);
    afterAll(() => p?.stop(), SETUP_MS);

    const env = () => ({ HOME: home, DOCKER_CONFIG: join(home, ".docker") });
    const orasRun = (args: string[]) => ok([oras.path as string, ...args], { env: env() });
    const craneRun = (args: string[]) => ok([crane.path as string, ...args, "--insecure"], { env: env() });
    /** Every manifest that has referrers: the root, each platform manifest, each SBOM and provenance. */
    const subjects = () => [
      p.graph.root.digest,
      ...p.graph.platforms.map((x) => x.descriptor.digest),
      ...p.graph.platforms.flatMap((x) =>
        [ARTIFACT.spdx, ARTIFACT.intoto].map((t) => p.graph.only(x.descriptor.digest, t).digest),
      ),
    ];

    test("the signed archive holds per platform one SBOM, one provenance and one signature, each SBOM and provenance signed, the root signed", () => {
      expect(p.graph.platforms.map((x) => x.arch).sort()).toEqual(["amd64", "arm64"]);
      expect(treeOf(p.graph, p.graph.root.digest).map((n) => n.artifactType)).toEqual([
        ARTIFACT.cosignSignature,
      ]);
      for (const { descriptor } of p.graph.platforms) {
        const tree = treeOf(p.graph, descriptor.digest);
        expect(tree.map((n) => n.artifactType).sort()).toEqual(
          [ARTIFACT.spdx, ARTIFACT.intoto, ARTIFACT.cosignSignature].sort(),
        );
        for (const n of tree)
          expect(n.referrers.map((r) => r.artifactType)).toEqual(
            n.artifactType === ARTIFACT.cosignSignature ? [] : [ARTIFACT.cosignSignature],
          );
      }
    });

    // oras resolves in a layout only what index.json names (a platform manifest by digest reads as a
    // plain blob), so the platform manifests are reached by the tag and --platform
    test("oras discover reads the archive itself (an OCI layout in a tar): the same referrer tree", async () => {
      const root = await orasRun(["discover", "--oci-layout", "--format", "json", `${p.signed}:v${VERSION}`]);
      expect(JSON.parse(root.stdout).digest).toBe(p.graph.root.digest);
      expect(orasTree(JSON.parse(root.stdout).referrers)).toEqual(treeOf(p.graph, p.graph.root.digest));
      for (const { arch, descriptor } of p.graph.platforms) {
        const args = ["discover", "--oci-layout", "--platform", `linux/${arch}`, "--format", "json"];
        const out = JSON.parse((await orasRun([...args, `${p.signed}:v${VERSION}`])).stdout);
        expect(out.digest).toBe(descriptor.digest);
        expect(orasTree(out.referrers)).toEqual(treeOf(p.graph, descriptor.digest));
      }
    });

    const each = (name: string, fn: (t: Target) => Promise<void>) => eachTarget(() => p, name, fn);

    each(
      "oras discover lists each manifest's referrers and theirs, through that registry's own way",
      async (t) => {
        const spec = t.via === "api" ? "v1.1-referrers-api" : "v1.1-referrers-tag";
        for (const digest of [p.graph.root.digest, ...p.graph.platforms.map((x) => x.descriptor.digest)]) {
          const r = await orasRun([
            "discover",
            "--plain-http",
            "--distribution-spec",
            spec,
            "--format",
            "json",
            `${t.repository}@${digest}`,
          ]);
          const out = JSON.parse(r.stdout);
          expect(out.digest).toBe(digest);
          expect(orasTree(out.referrers)).toEqual(treeOf(p.graph, digest));
        }
      },
    );

    each(
      "crane ls: the image's tag, cosign's .sig tag of every signed manifest, and the tag scheme's indexes only where there is no API",
      async (t) => {
        const r = await craneRun(["ls", t.repository]);
        const signed = subjects();
        const expected = [
          `v${VERSION}`,
          ...signed.map((d) => `${tagOf(d)}.sig`),
          ...(t.via === "tag-scheme" ? signed.map(tagOf) : []),
        ].sort();
        expect(r.stdout.trim().split("\n").sort()).toEqual(expected);
      },
    );

    each(
      "crane manifest: every referrer byte for byte as in the archive; the tag scheme's index lists each with its artifactType and annotations",
      async (t) => {
        for (const subject of subjects()) {
          const referrers = p.graph.oci.referrersOf(subject);
          for (const ref of referrers) {
            const r = await craneRun(["manifest", `${t.repository}@${ref.descriptor.digest}`]);
            expect(r.stdout).toBe(new TextDecoder().decode(p.graph.oci.blob(ref.descriptor.digest)));
          }
          if (t.via !== "tag-scheme") continue;
          const index = JSON.parse(
            (await craneRun(["manifest", `${t.repository}:${tagOf(subject)}`])).stdout,
          ) as Index;
          expect(index.mediaType).toBe("application/vnd.oci.image.index.v1+json");
          expect([...index.manifests].sort(byDigest)).toEqual(
            referrers.map((x) => x.descriptor).sort(byDigest),
          );
        }
      },
    );

    each(
      "crane manifest of cosign's legacy <digest>.sig tag: the simple-signing layers of the signature referrers",
      async (t) => {
        for (const subject of subjects()) {
          const sig = JSON.parse(
            (await craneRun(["manifest", `${t.repository}:${tagOf(subject)}.sig`])).stdout,
          ) as Manifest;
          const referrer = p.graph.only(subject, ARTIFACT.cosignSignature);
          const fromArchive = JSON.parse(
            new TextDecoder().decode(p.graph.oci.blob(referrer.digest)),
          ) as Manifest;
          expect(sig.layers).toEqual(fromArchive.layers);
          for (const layer of sig.layers) {
            expect(layer.mediaType).toBe(ARTIFACT.simpleSigning);
            expect(layer.annotations?.[COSIGN_SIGNATURE_ANNOTATION]).toMatch(/^[A-Za-z0-9+/]+=*$/);
            const payload = JSON.parse((await craneRun(["blob", `${t.repository}@${layer.digest}`])).stdout);
            expect(payload.critical.image["docker-manifest-digest"]).toBe(subject);
          }
        }
      },
    );

    each(
      "oras pull of each SBOM and crane blob of each provenance: dist's files, byte for byte, by their titles",
      async (t) => {
        for (const { arch, descriptor } of p.graph.platforms) {
          const base = `aicr-image-${VERSION}.linux-${arch}`;
          const sbom = p.graph.only(descriptor.digest, ARTIFACT.spdx);
          const out = join(p.work, `pulled-${t.via}-${arch}`);
          await orasRun(["pull", "--plain-http", "-o", out, `${t.repository}@${sbom.digest}`]);
          expect(readFileSync(join(out, `${base}.spdx.json`))).toEqual(
            readFileSync(join(DIST, `${base}.spdx.json`)),
          );

          const prov = p.graph.only(descriptor.digest, ARTIFACT.intoto);
          const manifest = JSON.parse(
            (await craneRun(["manifest", `${t.repository}@${prov.digest}`])).stdout,
          ) as Manifest;
          expect(manifest.layers).toHaveLength(1);
          expect(manifest.layers[0]?.annotations?.[TITLE_ANNOTATION]).toBe(`${base}.provenance.json`);
          const blob = await run(
            [crane.path as string, "blob", `${t.repository}@${manifest.layers[0]?.digest}`, "--insecure"],
            {
              env: env(),
            },
          );
          expect(blob.code).toBe(0);
          expect(blob.stdout).toBe(readFileSync(join(DIST, `${base}.provenance.json`), "utf8"));
        }
      },
    );
  },
);
