/** The fixture on the standalone cluster's nodes (one GPU node tainted), as `npm run demo` would use it. */
import { describe, expect, test } from "bun:test";
import { demoNodes } from "../cluster/nodes.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import { ctrf, LONG, SAMPLE_RECIPE, validate, validationCluster } from "./_harness.ts";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, {
      hookMs: LONG,
      start: (b) => validationCluster(b, { nodes: demoNodes() }),
    });

    test(
      "a live validate passes every check on the demo nodes",
      async () => {
        const r = await validate(cluster(), ["-r", SAMPLE_RECIPE]);
        expect({ code: r.code, err: r.code ? r.stderr : "" }).toEqual({ code: 0, err: "" });
        expect(ctrf(r).summary).toMatchObject({ tests: 8, passed: 8 });
      },
      LONG,
    );
  });
