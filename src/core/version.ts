declare const AICR_VERSION: string | undefined;

/** Baked in by scripts/build.ts (`--define`); "dev" when run from source. */
export const VERSION: string = typeof AICR_VERSION === "string" ? AICR_VERSION : "0.0.0-dev";
