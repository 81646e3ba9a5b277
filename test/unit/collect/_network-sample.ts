import { readFileSync } from "node:fs";
import { join } from "node:path";

/** A cluster-config.yaml in the shape `l8k discover` writes (values made up): the fixture the e2e tests also use. */
export const SAMPLE_CLUSTER_CONFIG = readFileSync(
  join(import.meta.dir, "../../fixtures/network/cluster-config.yaml"),
  "utf8",
);
