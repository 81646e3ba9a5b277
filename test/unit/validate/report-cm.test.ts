import { expect, test } from "bun:test";
import { buildReportConfigMap, reportChecks } from "../../../src/validate/_report-cm.ts";

test("the report ConfigMap: key report.json, aicr's labels, no run-ID label (no cleanup or runs delete finds it)", () => {
  const cm = buildReportConfigMap(
    { namespace: "ops", name: "report" },
    '{"a":1}\n',
    "20261129-120000-0123456789abcdef",
  );
  expect(cm.data).toEqual({ "report.json": '{"a":1}\n' });
  expect(cm.metadata.labels["app.kubernetes.io/name"]).toBe("aicr");
  expect(Object.keys(cm.metadata.labels)).not.toContain("aicr.run/run-id");
  expect(cm.metadata.annotations).toEqual({ "aicr.run/last-run-id": "20261129-120000-0123456789abcdef" });
});

test("writing it takes get, create and patch on configmaps in its namespace", () => {
  expect(
    reportChecks({ namespace: "ops", name: "report" }).map((c) => `${c.verb} ${c.resource} ${c.name ?? "*"}`),
  ).toEqual(["get configmaps report", "create configmaps *", "patch configmaps report"]);
});
