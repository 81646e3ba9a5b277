/**
 * The test registry WITH the referrers API (test/tools/registry/main.go) behaves as the OCI
 * distribution spec 1.1 asks: `OCI-Subject` on a referrer's PUT, the referrers list with each
 * manifest's artifactType in digest order, and the artifactType filter. The supply-chain tests
 * rely on each (aicr image push picks the API by the header).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { type ReferrersRegistry, startReferrersRegistry, tool } from "./tools.ts";

const registry = await tool("registry");
const sha = (b: Uint8Array | string) => `sha256:${createHash("sha256").update(b).digest("hex")}`;
const MANIFEST = "application/vnd.oci.image.manifest.v1+json";
const EMPTY = "{}";

describe.skipIf(registry.missing !== undefined)(
  `referrers-API registry${registry.missing ? ` (skipped: ${registry.missing})` : ""}`,
  () => {
    let reg: ReferrersRegistry;
    beforeAll(async () => {
      reg = await startReferrersRegistry();
    });
    afterAll(() => reg?.stop());

    const putBlob = async (data: string) => {
      const res = await fetch(`${reg.url}/v2/t/blobs/uploads/?digest=${sha(data)}`, {
        method: "POST",
        body: data,
      });
      expect(res.status).toBe(201);
    };
    const putManifest = async (body: string, ref: string) =>
      fetch(`${reg.url}/v2/t/manifests/${ref}`, {
        method: "PUT",
        headers: { "content-type": MANIFEST },
        body,
      });
    const artifact = (artifactType: string, subject: { digest: string; size: number }, layer: string) =>
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MANIFEST,
        artifactType,
        config: { mediaType: "application/vnd.oci.empty.v1+json", digest: sha(EMPTY), size: 2 },
        layers: [{ mediaType: artifactType, digest: sha(layer), size: layer.length }],
        subject: { mediaType: MANIFEST, ...subject },
      });

    test("OCI-Subject on a referrer's PUT, none on a plain manifest's; the list names each artifactType, filterable", async () => {
      await putBlob(EMPTY);
      const layer = "layer";
      await putBlob(layer);
      const image = JSON.stringify({
        schemaVersion: 2,
        mediaType: MANIFEST,
        config: { mediaType: "application/vnd.oci.empty.v1+json", digest: sha(EMPTY), size: 2 },
        layers: [
          { mediaType: "application/vnd.oci.image.layer.v1.tar", digest: sha(layer), size: layer.length },
        ],
      });
      const plain = await putManifest(image, "v1");
      expect(plain.status).toBe(201);
      expect(plain.headers.get("oci-subject")).toBeNull();
      const subject = { digest: sha(image), size: image.length };

      const sbom = artifact("application/spdx+json", subject, layer);
      const prov = artifact("application/vnd.in-toto+json", subject, layer);
      for (const a of [sbom, prov]) {
        const res = await putManifest(a, sha(a));
        expect(res.status).toBe(201);
        expect(res.headers.get("oci-subject")).toBe(subject.digest);
      }

      const all = await fetch(`${reg.url}/v2/t/referrers/${subject.digest}`);
      expect(all.status).toBe(200);
      expect(all.headers.get("content-type")).toBe("application/vnd.oci.image.index.v1+json");
      const list = (await all.json()) as { manifests: { digest: string; artifactType: string }[] };
      const expected = [
        { digest: sha(sbom), artifactType: "application/spdx+json" },
        { digest: sha(prov), artifactType: "application/vnd.in-toto+json" },
      ].sort((a, b) => (a.digest < b.digest ? -1 : 1));
      expect(list.manifests.map((m) => ({ digest: m.digest, artifactType: m.artifactType }))).toEqual(
        expected,
      );

      const only = await fetch(
        `${reg.url}/v2/t/referrers/${subject.digest}?artifactType=application/spdx%2Bjson`,
      );
      expect(only.headers.get("oci-filters-applied")).toBe("artifactType");
      expect(
        ((await only.json()) as { manifests: { digest: string }[] }).manifests.map((m) => m.digest),
      ).toEqual([sha(sbom)]);

      const none = await fetch(`${reg.url}/v2/t/referrers/${sha("nothing")}`);
      expect(none.status).toBe(200);
      expect(((await none.json()) as { manifests: unknown[] }).manifests).toEqual([]);
    });
  },
);
