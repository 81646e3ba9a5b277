import type { TestCluster } from "../cluster/testbed.ts";

/**
 * Every request the cluster's request log holds after entry `before`, as "METHOD path": what a test
 * compares with [] to prove that bad input sent nothing at all.
 */
export const requestsSince = (cluster: TestCluster, before: number): string[] =>
  cluster.log.entries.slice(before).map((e) => `${e.method} ${e.path}`);
