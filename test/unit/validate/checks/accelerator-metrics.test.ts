import { describe, expect, test } from "bun:test";
import {
  metricsSample,
  metricsVerdict,
  REQUIRED_DCGM_METRICS,
  requiredMetrics,
} from "../../../../src/validate/checks/accelerator-metrics.ts";

const URL = "http://192.0.2.2:40000/metrics";
const family = (name: string) => `# HELP ${name} x.\n# TYPE ${name} gauge\n${name}{gpu="0"} 1\n`;
const all = REQUIRED_DCGM_METRICS.map(family).join("");

describe("accelerator-metrics verdict", () => {
  test("passed: every required family in a 200 answer", () => {
    const v = metricsVerdict({ kind: "answer", url: URL, status: 200, body: all, truncated: false });
    expect(v.status).toBe("passed");
    expect(v.message).toBe(`the DCGM exporter at ${URL} serves all 4 required GPU metrics`);
    expect(v.details).toEqual(REQUIRED_DCGM_METRICS.map((m) => `${m}: FOUND`));
  });

  test("failed: the missing families named, comma-separated", () => {
    const body = family("DCGM_FI_DEV_GPU_UTIL") + family("DCGM_FI_DEV_FB_USED");
    const v = metricsVerdict({ kind: "answer", url: URL, status: 200, body, truncated: false });
    expect(v).toMatchObject({
      status: "failed",
      message:
        "the DCGM exporter does not serve required metric(s): DCGM_FI_DEV_GPU_TEMP, DCGM_FI_DEV_POWER_USAGE",
    });
    expect(v.details).toContain("DCGM_FI_DEV_GPU_TEMP: MISSING");
  });

  test("a name in a HELP line alone counts, as plain text (the original's rule)", () => {
    const body = REQUIRED_DCGM_METRICS.map((m) => `# HELP ${m} only described`).join("\n");
    expect(requiredMetrics(body).every((m) => m.found)).toBe(true);
  });

  test("failed: a non-200 answer, a transport error, no Service, no port, no ready endpoint", () => {
    expect(
      metricsVerdict({ kind: "answer", url: URL, status: 500, body: all, truncated: false }).message,
    ).toBe(`the DCGM exporter answered GET ${URL} with HTTP 500, expected 200`);
    expect(
      metricsVerdict({ kind: "transport-error", url: URL, message: "ECONNREFUSED: refused" }).message,
    ).toBe(`the DCGM exporter did not answer GET ${URL}: ECONNREFUSED: refused`);
    expect(metricsVerdict({ kind: "no-service" }).message).toBe(
      "Service gpu-operator/nvidia-dcgm-exporter not found: the DCGM exporter is not deployed",
    );
    expect(metricsVerdict({ kind: "no-port", ports: [80] }).message).toBe(
      "Service gpu-operator/nvidia-dcgm-exporter has no port 9400 (ports: 80): the DCGM exporter cannot be reached",
    );
    expect(metricsVerdict({ kind: "no-endpoint" }).message).toBe(
      "Service gpu-operator/nvidia-dcgm-exporter has no ready endpoint: no DCGM exporter pod is ready to serve metrics on port 9400",
    );
    for (const kind of ["no-service", "no-endpoint"] as const)
      expect(metricsVerdict({ kind }).status).toBe("failed");
  });

  test("a truncated answer is still searched, and says so", () => {
    const v = metricsVerdict({ kind: "answer", url: URL, status: 200, body: all, truncated: true });
    expect(v.status).toBe("passed");
    expect(v.details.at(-1)).toBe("(only the first 1 MiB of the answer was read)");
  });
});

describe("metricsSample", () => {
  test("the first 8 lines, then a mark when there were more", () => {
    const lines = Array.from({ length: 12 }, (_, i) => `line${i}`);
    expect(metricsSample(`${lines.join("\n")}\n`)).toBe(`${lines.slice(0, 8).join("\n")}\n... [truncated]`);
    expect(metricsSample("a\nb\n")).toBe("a\nb");
    expect(metricsSample(`${lines.slice(0, 8).join("\n")}\n`)).toBe(lines.slice(0, 8).join("\n"));
  });
});
