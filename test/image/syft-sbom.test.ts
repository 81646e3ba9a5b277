/**
 * syft (v1.57.1, built from the Go module proxy: test/tools) scans dist/aicr-image-<version>.tar per
 * platform, and what it finds agrees with our image SBOM (dist/aicr-image-<version>.linux-<arch>.spdx.json):
 *
 *   - the same image: syft's source manifest digest is the digest our image package's purl names;
 *   - the one OS package, libc6, from var/lib/dpkg/status.d/libc6 (the distroless convention): the
 *     same name, version and architecture, its source package glibc; both say NOASSERTION for its
 *     licence (the image carries no /usr/share/doc/libc6/copyright for syft to read).
 *
 * What syft does not see, each for a reason the test pins down (any other difference fails it):
 *
 *   - the npm packages and Bun's runtime: they are inside the Bun-compiled binary; syft's JavaScript
 *     catalogers read package.json and lockfiles on disk, and its bun-binary classifier matches only
 *     files named `bun` (the binary is /usr/local/bin/aicr);
 *   - the aicr binary itself: no classifier knows it (no Go build info, no known version string);
 *   - the image package: syft reports the image as the document's subject (its source), not as a package;
 *   - libc6's purl: syft writes a deb purl only when it knows the distro from /etc/os-release, which
 *     the image does not carry, so syft's is empty where ours is pkg:deb/debian/libc6@…?arch=…&distro=debian-12.
 *     Were the image to carry one, syft's purl would be ours plus the qualifier upstream=glibc.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ok } from "../tools/supply-chain.ts";
import { tool } from "../tools/tools.ts";
import { ARCHIVE, DIST, ensureImage, VERSION } from "./_image.ts";

const syft = await tool("syft");

interface SpdxPackage {
  name: string;
  versionInfo?: string;
  licenseDeclared?: string;
  checksums?: { algorithm: string; checksumValue: string }[];
  externalRefs?: { referenceType: string; referenceLocator: string }[];
  primaryPackagePurpose?: string;
}
interface SyftArtifact {
  name: string;
  version: string;
  type: string;
  purl: string;
  licenses: unknown[];
  locations: { path: string }[];
  metadata: { package: string; source: string; architecture: string; files?: { path: string }[] };
}
interface SyftDoc {
  artifacts: SyftArtifact[];
  source: { metadata: { manifestDigest: string; architecture: string } };
  distro: { id?: string; versionID?: string };
}

const purlOf = (p: SpdxPackage): string =>
  p.externalRefs?.find((r) => r.referenceType === "purl")?.referenceLocator ?? "";

describe.skipIf(syft.missing !== undefined)(
  `syft's scan of the image agrees with our image SBOM${syft.missing ? ` (skipped: ${syft.missing})` : ""}`,
  () => {
    let work: string;
    beforeAll(async () => {
      await ensureImage();
      work = mkdtempSync(join(tmpdir(), "aicr-syft-"));
    }, 180_000);
    afterAll(() => rmSync(work, { recursive: true, force: true }));

    /** syft-json and spdx-json of one platform; no update check, no cache or config of the developer's. */
    const scan = async (arch: string): Promise<{ doc: SyftDoc; spdx: { packages: SpdxPackage[] } }> => {
      const home = join(work, arch);
      mkdirSync(home);
      const [json, spdx] = [join(home, "syft.json"), join(home, "syft.spdx.json")];
      await ok(
        [
          syft.path as string,
          "scan",
          `oci-archive:${ARCHIVE}`,
          "--platform",
          `linux/${arch}`,
          "-o",
          `syft-json=${json}`,
          "-o",
          `spdx-json=${spdx}`,
          "-q",
        ],
        {
          env: {
            HOME: home,
            TMPDIR: home,
            XDG_CACHE_HOME: join(home, "cache"),
            XDG_CONFIG_HOME: join(home, "config"),
            SYFT_CHECK_FOR_APP_UPDATE: "false",
          },
        },
      );
      return { doc: JSON.parse(readFileSync(json, "utf8")), spdx: JSON.parse(readFileSync(spdx, "utf8")) };
    };

    test.each([["amd64"], ["arm64"]])(
      "linux/%s: the same image and the same libc6; everything else of ours is inside the binary or the image itself",
      async (arch) => {
        const ours = JSON.parse(
          readFileSync(join(DIST, `aicr-image-${VERSION}.linux-${arch}.spdx.json`), "utf8"),
        ) as {
          packages: SpdxPackage[];
        };
        const { doc, spdx } = await scan(arch);

        // the same image
        const image = ours.packages.find((p) => purlOf(p).startsWith("pkg:oci/")) as SpdxPackage;
        const digest = decodeURIComponent(purlOf(image).match(/@([^?]+)/)?.[1] ?? "");
        expect(doc.source.metadata.manifestDigest).toBe(digest);
        expect(doc.source.metadata.architecture).toBe(arch);
        expect(purlOf(image)).toContain(`arch=${arch}`);

        // the one package syft finds: libc6, as ours names it
        expect(doc.artifacts.map((a) => `${a.type}:${a.name}`)).toEqual(["deb:libc6"]);
        const found = doc.artifacts[0] as SyftArtifact;
        const libc6 = ours.packages.find((p) => p.name === "libc6") as SpdxPackage;
        expect(found.version).toBe(libc6.versionInfo as string);
        expect(found.metadata.architecture).toBe(arch);
        expect(found.metadata.source).toBe("glibc");
        expect(found.locations.map((l) => l.path)).toContain("/var/lib/dpkg/status.d/libc6");
        expect(purlOf(libc6)).toBe(
          `pkg:deb/debian/libc6@${encodeURIComponent(found.version)}?arch=${arch}&distro=debian-12`,
        );
        if (doc.distro.id === undefined) expect(found.purl).toBe("");
        else expect(found.purl).toBe(`${purlOf(libc6).replace("&distro=", "&upstream=glibc&distro=")}`);
        // no copyright file in the image: neither claims a licence
        expect(found.licenses).toEqual([]);
        expect(libc6.licenseDeclared).toBe("NOASSERTION");
        const syftLibc6 = spdx.packages.find((p) => p.name === "libc6") as SpdxPackage;
        expect(syftLibc6.versionInfo).toBe(libc6.versionInfo as string);
        expect(syftLibc6.licenseDeclared).toBe("NOASSERTION");
        // syft's SPDX document describes the image by its manifest digest
        const root = spdx.packages.find((p) => p.versionInfo === digest) as SpdxPackage;
        expect(root.checksums).toContainEqual({
          algorithm: "SHA256",
          checksumValue: digest.slice("sha256:".length),
        });

        // every other package of ours is one syft cannot see, for the reasons above
        const unseen = ours.packages.filter((p) => p !== libc6).map(purlOf);
        const why = (purl: string) =>
          purl.startsWith("pkg:oci/aicr@")
            ? "the image: syft's source, not a package"
            : purl === `pkg:generic/aicr@${VERSION}`
              ? "the aicr binary: no classifier for it"
              : purl.startsWith("pkg:npm/%40oven/bun-")
                ? "Bun's runtime: compiled into the binary"
                : purl.startsWith("pkg:npm/")
                  ? "an npm package: bundled into the binary"
                  : `unexplained: ${purl}`;
        expect(unseen.map(why).filter((w) => w.startsWith("unexplained"))).toEqual([]);
        expect(new Set(unseen.map(why)).size).toBe(4);
      },
    );
  },
);
