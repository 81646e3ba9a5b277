/**
 * Provenance: in-toto Statement v1 with a SLSA provenance v1 predicate, for a binary (subject: the
 * file) and for a platform image (subject: the repository at the manifest digest). What was built,
 * from which revision, lockfile, Bun runtime (and for images the libc6 .deb and the binary), by
 * which command. No wall-clock time: the build date is the commit's. Pure.
 */
import type { ImageInfo } from "../_aicr-image.ts";
import { type BuildFacts, integrityDigests, PROJECT_URL, sourceUri } from "./_facts.ts";
import { npmPurl } from "./_purl.ts";

export const STATEMENT_TYPE = "https://in-toto.io/Statement/v1";
export const SLSA_PROVENANCE = "https://slsa.dev/provenance/v1";
export const BUILD_TYPE = `${PROJECT_URL}/docs/image.md#provenance`;

export interface ResourceDescriptor {
  name?: string;
  uri?: string;
  digest: Record<string, string>;
}

export interface Statement {
  _type: typeof STATEMENT_TYPE;
  subject: { name: string; digest: { sha256: string } }[];
  predicateType: typeof SLSA_PROVENANCE;
  predicate: {
    buildDefinition: {
      buildType: string;
      externalParameters: Record<string, string>;
      internalParameters: Record<string, string>;
      resolvedDependencies: ResourceDescriptor[];
    };
    runDetails: { builder: { id: string }; metadata: Record<string, never> };
  };
}

const hex = (digest: string): string => digest.replace(/^sha256:/, "");

/** The revision, the lockfile and Bun's runtime package: what every aicr build resolves. */
function sources(facts: BuildFacts): ResourceDescriptor[] {
  const source = sourceUri(facts.revision);
  const runtime = integrityDigests(facts.runtime.integrity);
  return [
    ...(source ? [{ uri: source, digest: { gitCommit: facts.revision } }] : []),
    { name: "package-lock.json", digest: { sha256: facts.lockfileSha256 } },
    {
      name: facts.runtime.name,
      uri: npmPurl(facts.runtime.name, facts.runtime.version),
      digest: runtime.sha512 ? { sha512: runtime.sha512 } : runtime,
    },
  ];
}

function statement(
  subject: Statement["subject"][number],
  builder: string,
  externalParameters: Record<string, string>,
  facts: BuildFacts,
  dependencies: ResourceDescriptor[],
): Statement {
  const source = sourceUri(facts.revision);
  return {
    _type: STATEMENT_TYPE,
    subject: [subject],
    predicateType: SLSA_PROVENANCE,
    predicate: {
      buildDefinition: {
        buildType: BUILD_TYPE,
        externalParameters: { ...(source ? { source } : {}), ...externalParameters },
        internalParameters: { version: facts.version, built: facts.built, bun: facts.bun },
        resolvedDependencies: [...sources(facts), ...dependencies],
      },
      runDetails: { builder: { id: `${PROJECT_URL}/${builder}` }, metadata: {} },
    },
  };
}

/** The provenance of one binary: `name` is its file name (aicr-<target>), `sha256` its digest (hex). */
export function binaryProvenance(facts: BuildFacts, binary: { name: string; sha256: string }): Statement {
  return statement(
    { name: binary.name, digest: { sha256: binary.sha256 } },
    "scripts/build.ts",
    { command: facts.command, target: facts.target, repository: facts.repository },
    facts,
    [],
  );
}

/** The provenance of one platform image: subject the repository at its manifest digest. */
export function imageProvenance(info: ImageInfo, manifestDigest: string, binarySha256: string): Statement {
  const deb = info.runtimeDeb;
  return statement(
    { name: info.repository, digest: { sha256: hex(manifestDigest) } },
    "scripts/image.ts",
    { command: "npm run image", platform: `linux/${info.arch}`, repository: info.repository, tag: info.tag },
    info.build,
    [
      { name: deb.url.split("/").pop() ?? deb.name, uri: deb.url, digest: { sha256: deb.sha256 } },
      { name: `aicr-${info.build.target}`, digest: { sha256: binarySha256 } },
    ],
  );
}
