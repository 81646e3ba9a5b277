declare const AICR_VERSION: string | undefined;
declare const AICR_IMAGE_REPOSITORY: string | undefined;
declare const AICR_REVISION: string | undefined;
declare const AICR_BUILT: string | undefined;

/** Baked in by scripts/build.ts (`--define`); "0.0.0-dev" when run from source. */
export const VERSION: string = typeof AICR_VERSION === "string" ? AICR_VERSION : "0.0.0-dev";

/** The git commit the binary was built from ("unknown" from source or outside a checkout). */
export const REVISION: string = typeof AICR_REVISION === "string" ? AICR_REVISION : "unknown";

/** When the sources were last changed (the commit's date, UTC); "unknown" from source. */
export const BUILT: string = typeof AICR_BUILT === "string" ? AICR_BUILT : "unknown";

/**
 * Where this project publishes its agent image: a build-time setting (package.json
 * config.imageRepository, or AICR_IMAGE_REPOSITORY when building).
 */
export const IMAGE_REPOSITORY: string =
  typeof AICR_IMAGE_REPOSITORY === "string" ? AICR_IMAGE_REPOSITORY : "ghcr.io/aicr-project/aicr";

const isDev = (v: string): boolean => v.endsWith("-dev");

/** The image tag of a version: `v<version>`, or `latest` for a build from source. */
export const releaseTag = (version: string): string => (isDev(version) ? "latest" : `v${version}`);

/** The agent (and validator) image this binary deploys unless --image or AICR_IMAGE says otherwise. */
export const DEFAULT_IMAGE = `${IMAGE_REPOSITORY}:${releaseTag(VERSION)}`;
