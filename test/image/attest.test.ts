/**
 * The SBOM and provenance builders (src/image/attest/): SPDX 2.3 documents for a binary and for a
 * platform image, in-toto/SLSA provenance statements, their purls and licences, the referrers that
 * carry them — checked against the specifications' shapes (_attest-check.ts) and for exact content.
 */
import { describe, expect, test } from "bun:test";
import { sha256Digest } from "../../src/image/_oci.ts";
import { imageAttestations } from "../../src/image/attest/_image-attestations.ts";
import { spdxExpression } from "../../src/image/attest/_license.ts";
import { binaryProvenance, imageProvenance } from "../../src/image/attest/_provenance.ts";
import { debPurl, npmPurl, ociPurl } from "../../src/image/attest/_purl.ts";
import { attestationBytes, binarySbom, imageSbom } from "../../src/image/attest/_spdx.ts";
import { provenanceProblems, purlProblems, spdxProblems } from "./_attest-check.ts";
import { fakeFacts, fakeImage, fakeInfo, fakeRuntime } from "./_fixtures.ts";

const BINARY = { name: "aicr-linux-x64", sha256: "a".repeat(64) };
const hexOf = (integrity: string) => Buffer.from(integrity.slice("sha512-".length), "base64").toString("hex");
const purlOf = (pkg: any): string =>
  pkg.externalRefs.find((r: any) => r.referenceType === "purl").referenceLocator;

describe("purls", () => {
  test("npm: the scope's @ is %40; deb: the version's + is %2B, qualifiers sorted; oci: the digest's : is %3A", () => {
    expect(npmPurl("@kubernetes/client-node", "1.4.0")).toBe("pkg:npm/%40kubernetes/client-node@1.4.0");
    expect(npmPurl("yaml", "2.9.1")).toBe("pkg:npm/yaml@2.9.1");
    expect(npmPurl("@oven/bun-linux-x64", "1.4.5")).toBe("pkg:npm/%40oven/bun-linux-x64@1.4.5");
    expect(debPurl("libc6", "2.36-9+deb12u14", "amd64", "debian-12")).toBe(
      "pkg:deb/debian/libc6@2.36-9%2Bdeb12u14?arch=amd64&distro=debian-12",
    );
    const digest = `sha256:${"1".repeat(64)}`;
    expect(ociPurl("registry.example:5000/Team/AICR", digest, "arm64")).toBe(
      `pkg:oci/aicr@sha256%3A${"1".repeat(64)}?arch=arm64&repository_url=registry.example:5000/Team/AICR`,
    );
    for (const p of [npmPurl("@a/b", "1.0.0-rc.1+build"), debPurl("libc6", "1:2.3~x", "arm64", "debian-12")])
      expect(purlProblems(p)).toEqual([]);
    expect(() => npmPurl("a/b/c", "1")).toThrow("not an npm package name");
  });
});

describe("licence expressions", () => {
  test("valid SPDX expressions over listed ids pass (canonical case); anything else is undefined", () => {
    expect(spdxExpression("MIT")).toBe("MIT");
    expect(spdxExpression("mit")).toBe("MIT");
    expect(spdxExpression("(MIT OR Apache-2.0)")).toBe("(MIT OR Apache-2.0)");
    expect(spdxExpression("MIT OR Apache-2.0 AND ISC")).toBe("MIT OR Apache-2.0 AND ISC");
    expect(spdxExpression("Apache-2.0 WITH LLVM-exception")).toBe("Apache-2.0 WITH LLVM-exception");
    expect(spdxExpression("GPL-2.0+")).toBe("GPL-2.0+");
    expect(spdxExpression("LicenseRef-Custom.1")).toBe("LicenseRef-Custom.1");
    for (const bad of [
      "",
      "BSD",
      "SEE LICENSE IN LICENSE",
      "MIT AND",
      "(MIT",
      "MIT)",
      "MIT WITH Foo",
      "MIT ISC",
    ])
      expect(spdxExpression(bad)).toBeUndefined();
    expect(spdxExpression(undefined)).toBeUndefined();
  });
});

describe("binary SBOM", () => {
  const facts = fakeFacts("linux-x64");
  const doc = binarySbom(facts, BINARY);

  test("conforms to SPDX 2.3: required fields, SPDXIDs, relationships, licences, purls", () => {
    expect(spdxProblems(doc)).toEqual([]);
  });

  test("names the binary, its version and digest; created is the build date; the tool is aicr", () => {
    expect(doc.name).toBe("aicr-linux-x64-1.2.3");
    expect(doc.documentNamespace).toBe(
      `https://github.com/aicr-project/aicr/spdx/aicr-linux-x64-1.2.3-${"a".repeat(64)}`,
    );
    expect(doc.creationInfo).toEqual({ created: "2026-01-02T03:04:05Z", creators: ["Tool: aicr-1.2.3"] });
  });

  test("aicr first (SHA256, Apache-2.0, APPLICATION, pkg:generic), then the npm packages and Bun's runtime by name", () => {
    const [aicr, ...rest] = doc.packages;
    expect(aicr).toMatchObject({
      name: "aicr",
      SPDXID: "SPDXRef-Package-aicr",
      versionInfo: "1.2.3",
      packageFileName: "aicr-linux-x64",
      downloadLocation: `git+https://github.com/aicr-project/aicr@${facts.revision}`,
      checksums: [{ algorithm: "SHA256", checksumValue: "a".repeat(64) }],
      licenseDeclared: "Apache-2.0",
      primaryPackagePurpose: "APPLICATION",
      builtDate: "2026-01-02T03:04:05Z",
    });
    expect(purlOf(aicr)).toBe("pkg:generic/aicr@1.2.3");
    expect(rest.map((p) => `${p.name}@${p.versionInfo}`)).toEqual([
      "@kubernetes/client-node@1.4.0",
      "@oven/bun-linux-x64@1.4.5",
      "yaml@2.9.1",
    ]);
    const runtime = rest[1]!;
    expect(runtime).toMatchObject({
      checksums: [{ algorithm: "SHA512", checksumValue: hexOf(facts.runtime.integrity) }],
      licenseDeclared: "MIT",
      downloadLocation: "NOASSERTION",
      primaryPackagePurpose: "LIBRARY",
    });
    expect(purlOf(runtime)).toBe("pkg:npm/%40oven/bun-linux-x64@1.4.5");
    expect(purlOf(rest[0])).toBe("pkg:npm/%40kubernetes/client-node@1.4.0");
  });

  test("DOCUMENT DESCRIBES aicr; aicr CONTAINS each package", () => {
    const aicr = doc.packages[0]!.SPDXID;
    expect(doc.relationships).toEqual([
      { spdxElementId: "SPDXRef-DOCUMENT", relationshipType: "DESCRIBES", relatedSpdxElement: aicr },
      ...doc.packages.slice(1).map((p) => ({
        spdxElementId: aicr,
        relationshipType: "CONTAINS",
        relatedSpdxElement: p.SPDXID,
      })),
    ]);
  });

  test("a licence that is not a valid expression is NOASSERTION, the declared text kept in licenseComments", () => {
    const odd = binarySbom(
      fakeFacts("linux-x64", {
        packages: [
          {
            name: "odd",
            version: "1.0.0",
            integrity: facts.runtime.integrity,
            license: "SEE LICENSE IN LICENSE",
          },
          { name: "none", version: "1.0.0", integrity: facts.runtime.integrity },
        ],
      }),
      BINARY,
    );
    expect(spdxProblems(odd)).toEqual([]);
    expect(odd.packages.find((p) => p.name === "odd")).toMatchObject({
      licenseDeclared: "NOASSERTION",
      licenseComments: 'declared as "SEE LICENSE IN LICENSE"',
    });
    expect(odd.packages.find((p) => p.name === "none")?.licenseDeclared).toBe("NOASSERTION");
  });

  test("SPDXIDs stay unique when names sanitise alike; a resolved URL is the download location", () => {
    const integrity = facts.runtime.integrity;
    const doc2 = binarySbom(
      fakeFacts("linux-x64", {
        packages: [
          { name: "@a/b", version: "1.0.0", integrity },
          {
            name: "a-b",
            version: "1.0.0",
            integrity,
            resolved: "https://registry.npmjs.org/a-b/-/a-b-1.0.0.tgz",
          },
        ],
      }),
      BINARY,
    );
    expect(spdxProblems(doc2)).toEqual([]);
    expect(doc2.packages.find((p) => p.name === "a-b")?.downloadLocation).toBe(
      "https://registry.npmjs.org/a-b/-/a-b-1.0.0.tgz",
    );
  });

  test("without a git revision or build date: no source location, created at the epoch", () => {
    const bare = binarySbom(fakeFacts("linux-x64", { revision: "unknown", built: "unknown" }), BINARY);
    expect(spdxProblems(bare)).toEqual([]);
    expect(bare.packages[0]?.downloadLocation).toBe("NOASSERTION");
    expect(bare.creationInfo.created).toBe("1970-01-01T00:00:00Z");
    expect(bare.packages[0]?.builtDate).toBeUndefined();
  });

  test("deterministic bytes: two-space JSON and a newline, the same for the same facts", () => {
    const bytes = attestationBytes(doc);
    expect(new TextDecoder().decode(bytes)).toBe(`${JSON.stringify(doc, null, 2)}\n`);
    expect(attestationBytes(binarySbom(fakeFacts("linux-x64"), BINARY))).toEqual(bytes);
  });
});

describe("image SBOM", () => {
  const { image, info } = fakeImage("amd64");
  const digest = image.descriptor.digest;
  const deb = { ...info.runtimeDeb, version: "2.36-9+deb12u14" };
  const doc = imageSbom({ ...info, runtimeDeb: deb }, digest, "b".repeat(64));

  test("conforms to SPDX 2.3", () => {
    expect(spdxProblems(doc)).toEqual([]);
  });

  test("the image (oci purl of the manifest digest), the binary, libc6 (deb purl, .deb SHA256), the npm packages", () => {
    expect(doc.name).toBe("aicr-image-1.2.3-linux-amd64");
    expect(doc.documentNamespace).toBe(
      `https://github.com/aicr-project/aicr/spdx/aicr-image-1.2.3-linux-amd64-${digest.slice(7)}`,
    );
    const [img, bin, libc, ...npm] = doc.packages;
    expect(img).toMatchObject({
      name: "registry.example/team/aicr",
      versionInfo: "v1.2.3",
      checksums: [{ algorithm: "SHA256", checksumValue: digest.slice(7) }],
      primaryPackagePurpose: "CONTAINER",
    });
    expect(purlOf(img)).toBe(
      `pkg:oci/aicr@sha256%3A${digest.slice(7)}?arch=amd64&repository_url=registry.example/team/aicr`,
    );
    expect(bin).toMatchObject({
      name: "aicr",
      checksums: [{ algorithm: "SHA256", checksumValue: "b".repeat(64) }],
    });
    expect(libc).toMatchObject({
      name: "libc6",
      versionInfo: "2.36-9+deb12u14",
      supplier: "Organization: Debian",
      downloadLocation: deb.url,
      checksums: [{ algorithm: "SHA256", checksumValue: deb.sha256 }],
    });
    expect(purlOf(libc)).toBe("pkg:deb/debian/libc6@2.36-9%2Bdeb12u14?arch=amd64&distro=debian-12");
    expect(npm.map((p) => p.name)).toEqual(["@kubernetes/client-node", "@oven/bun-linux-x64", "yaml"]);
  });

  test("DOCUMENT DESCRIBES the image; the image CONTAINS the binary and libc6; the binary CONTAINS the npm packages", () => {
    const [img, bin, libc, ...npm] = doc.packages.map((p) => p.SPDXID);
    const rel = (a: string, t: string, b: string) => ({
      spdxElementId: a,
      relationshipType: t,
      relatedSpdxElement: b,
    });
    expect(doc.relationships).toEqual([
      rel("SPDXRef-DOCUMENT", "DESCRIBES", img!),
      rel(img!, "CONTAINS", bin!),
      rel(img!, "CONTAINS", libc!),
      ...npm.map((id) => rel(bin!, "CONTAINS", id)),
    ]);
  });
});

describe("provenance", () => {
  const facts = fakeFacts("linux-arm64");

  test("a binary: subject the file, the revision, lockfile and Bun runtime resolved, the build command", () => {
    const s = binaryProvenance(facts, { name: "aicr-linux-arm64", sha256: "c".repeat(64) });
    expect(provenanceProblems(s)).toEqual([]);
    expect(s.subject).toEqual([{ name: "aicr-linux-arm64", digest: { sha256: "c".repeat(64) } }]);
    expect(s.predicate.buildDefinition.buildType).toBe(
      "https://github.com/aicr-project/aicr/docs/image.md#provenance",
    );
    expect(s.predicate.buildDefinition.externalParameters).toEqual({
      source: `git+https://github.com/aicr-project/aicr@${facts.revision}`,
      command: "bun scripts/build.ts --targets linux-arm64",
      target: "linux-arm64",
      repository: "registry.example/team/aicr",
    });
    expect(s.predicate.buildDefinition.internalParameters).toEqual({
      version: "1.2.3",
      built: "2026-01-02T03:04:05Z",
      bun: "1.4.5",
    });
    expect(s.predicate.buildDefinition.resolvedDependencies).toEqual([
      {
        uri: `git+https://github.com/aicr-project/aicr@${facts.revision}`,
        digest: { gitCommit: facts.revision },
      },
      { name: "package-lock.json", digest: { sha256: "e".repeat(64) } },
      {
        name: "@oven/bun-linux-aarch64",
        uri: "pkg:npm/%40oven/bun-linux-aarch64@1.4.5",
        digest: { sha512: hexOf(facts.runtime.integrity) },
      },
    ]);
    expect(s.predicate.runDetails).toEqual({
      builder: { id: "https://github.com/aicr-project/aicr/scripts/build.ts" },
      metadata: {},
    });
  });

  test("an image: subject the repository at the manifest digest; the .deb and the binary resolved too", () => {
    const { image, info } = fakeImage("arm64");
    const s = imageProvenance(info, image.descriptor.digest, "d".repeat(64));
    expect(provenanceProblems(s)).toEqual([]);
    expect(s.subject).toEqual([
      { name: "registry.example/team/aicr", digest: { sha256: image.descriptor.digest.slice(7) } },
    ]);
    expect(s.predicate.buildDefinition.externalParameters).toMatchObject({
      command: "npm run image",
      platform: "linux/arm64",
      tag: "v1.2.3",
    });
    expect(s.predicate.buildDefinition.resolvedDependencies.slice(3)).toEqual([
      {
        name: "libc6_2.36-test_arm64.deb",
        uri: info.runtimeDeb.url,
        digest: { sha256: info.runtimeDeb.sha256 },
      },
      { name: "aicr-linux-arm64", digest: { sha256: "d".repeat(64) } },
    ]);
  });

  test("without a git revision there is no gitCommit dependency", () => {
    const s = binaryProvenance(fakeFacts("linux-x64", { revision: "unknown" }), BINARY);
    expect(provenanceProblems(s)).toEqual([]);
    expect(JSON.stringify(s)).not.toContain("gitCommit");
  });
});

describe("the image's referrers", () => {
  test("an SBOM and a provenance artifact of the platform manifest, each one layer holding the file's bytes", () => {
    const { image, info } = fakeImage("amd64");
    const [sbom, provenance] = imageAttestations(info, image, "e".repeat(64));
    expect(sbom!.name).toBe("aicr-image-1.2.3.linux-amd64.spdx.json");
    expect(provenance!.name).toBe("aicr-image-1.2.3.linux-amd64.provenance.json");
    expect(sbom!.data).toEqual(attestationBytes(imageSbom(info, image.descriptor.digest, "e".repeat(64))));
    expect(provenance!.data).toEqual(
      attestationBytes(imageProvenance(info, image.descriptor.digest, "e".repeat(64))),
    );
    const manifest = (a: typeof sbom) => JSON.parse(new TextDecoder().decode(a!.artifact.manifest));
    const subject = {
      mediaType: image.descriptor.mediaType,
      digest: image.descriptor.digest,
      size: image.descriptor.size,
    };
    expect(manifest(sbom)).toMatchObject({
      artifactType: "application/spdx+json",
      layers: [
        {
          mediaType: "application/spdx+json",
          digest: sha256Digest(sbom!.data),
          size: sbom!.data.length,
          annotations: { "org.opencontainers.image.title": sbom!.name },
        },
      ],
      subject,
    });
    expect(manifest(provenance)).toMatchObject({
      artifactType: "application/vnd.in-toto+json",
      layers: [{ mediaType: "application/vnd.in-toto+json", digest: sha256Digest(provenance!.data) }],
      subject,
      annotations: { "in-toto.io/predicate-type": "https://slsa.dev/provenance/v1" },
    });
    expect(sbom!.artifact.blobs.map((b) => b.digest)).toContain(sha256Digest(sbom!.data));
  });

  test("the same image info and binary give the same bytes; another binary, other bytes", () => {
    const runtime = fakeRuntime("amd64");
    const { image } = fakeImage("amd64");
    const a = imageAttestations(fakeInfo("amd64", runtime), image, "e".repeat(64));
    const b = imageAttestations(fakeInfo("amd64", runtime), image, "e".repeat(64));
    const c = imageAttestations(fakeInfo("amd64", runtime), image, "f".repeat(64));
    expect(a.map((x) => x.artifact.descriptor.digest)).toEqual(b.map((x) => x.artifact.descriptor.digest));
    expect(c[0]!.artifact.descriptor.digest).not.toBe(a[0]!.artifact.descriptor.digest);
  });
});

describe("the shape checks themselves", () => {
  test("catch a dangling relationship, a bad SPDXID, a bad licence and a malformed purl", () => {
    const doc: any = structuredClone(binarySbom(fakeFacts("linux-x64"), BINARY));
    doc.packages[1].SPDXID = "SPDXRef-bad_id";
    doc.packages[2].licenseDeclared = "BSD";
    doc.packages[3].externalRefs[0].referenceLocator = "pkg:npm/@scope/x@1";
    doc.relationships.push({
      spdxElementId: "SPDXRef-nowhere",
      relationshipType: "CONTAINS",
      relatedSpdxElement: "SPDXRef-DOCUMENT",
    });
    const problems = spdxProblems(doc).join("\n");
    expect(problems).toContain("does not match SPDXRef-");
    expect(problems).toContain("licenseDeclared BSD");
    expect(problems).toContain("purl pkg:npm/@scope/x@1:");
    expect(problems).toContain("relationship from unknown SPDXRef-nowhere");
  });
});
