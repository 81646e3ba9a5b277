import { expect, test } from "bun:test";
import { resolveValidateOptions, type ValidateFlags } from "../../../src/commands/_validate-flags.ts";
import type { AicrError } from "../../../src/core/errors.ts";
import { thrown } from "../../support/reject.ts";

const base: ValidateFlags = { recipe: "r.yaml", phases: [], skipChecks: [] };
const resolve = (f: Partial<ValidateFlags>) => resolveValidateOptions({ ...base, ...f }, {}, false);
const refused = (f: Partial<ValidateFlags>): AicrError => thrown(() => resolve(f));

test("defaults: the capture's Job prefix aicr-validate, no SA name (prefix mode), no placement", () => {
  const o = resolve({});
  expect(o.capture?.jobPrefix).toBe("aicr-validate");
  expect(o.capture?.serviceAccountName).toBeUndefined();
  expect(o.capture?.requireGpu).toBe(false);
  expect(o.placement).toEqual({ nodeSelector: undefined, tolerations: undefined, imagePullSecrets: [] });
  expect(o.outputConfigMap).toBeUndefined();
});

test("the capture flags reach the capture; selectors, tolerations and pull secrets reach the validators too", () => {
  const o = resolve({
    serviceAccountName: "runner",
    jobName: "ci-capture",
    nodeSelectors: ["pool=gpu", "zone=a"],
    tolerations: ["dedicated=ml:NoSchedule", "nvidia.com/gpu:NoExecute"],
    imagePullSecrets: ["regcred"],
    requireGpu: true,
  });
  expect(o.capture).toMatchObject({
    serviceAccountName: "runner",
    jobPrefix: "ci-capture",
    nodeSelector: { pool: "gpu", zone: "a" },
    imagePullSecrets: ["regcred"],
    requireGpu: true,
    autoTarget: false,
  });
  expect(o.placement).toEqual({
    nodeSelector: { pool: "gpu", zone: "a" },
    tolerations: [
      { key: "dedicated", operator: "Equal", value: "ml", effect: "NoSchedule" },
      { key: "nvidia.com/gpu", operator: "Exists", effect: "NoExecute" },
    ],
    imagePullSecrets: ["regcred"],
  });
  expect(o.capture?.tolerations).toEqual(o.placement.tolerations);
});

test("every bad value is INVALID_REQUEST naming the flag", () => {
  const cases: [Partial<ValidateFlags>, string][] = [
    [{ nodeSelectors: ["nokey"] }, "--node-selector"],
    [{ tolerations: ["a=b:Sometimes"] }, "--toleration"],
    [{ imagePullSecrets: ["Bad_Secret"] }, "--image-pull-secret"],
    [{ jobName: "Bad_Prefix" }, "--job-name"],
    [{ serviceAccountName: "-bad" }, "--service-account-name"],
    [{ requireGpu: "maybe" }, "--require-gpu"],
    [{ output: "cm://other/report" }, "--output"],
    [{ output: "cm://aicr-validation/report", format: "table" }, "--format"],
    [{ output: "cm://aicr-validation/r", recipe: "cm://aicr-validation/r" }, "--output"],
    [{ output: "cm://aicr-validation/r", snapshot: "s.yaml", noCluster: true }, "--output"],
    [{ snapshot: "s.yaml", serviceAccountName: "runner" }, "--service-account-name"],
    [{ snapshot: "s.yaml", requireGpu: true }, "--require-gpu"],
    [{ snapshot: "s.yaml", jobName: "x" }, "--job-name"],
  ];
  for (const [f, field] of cases) {
    const err = refused(f);
    expect({ f, code: err.exitCode, field: err.context.field }).toEqual({ f, code: 2, field });
    expect(err.remedy).toBeTruthy();
  }
});

test("-o cm://<run's namespace>/<name>: the report ConfigMap, JSON by default; placement still applies with -s", () => {
  const o = resolve({ output: "cm://aicr-validation/report" });
  expect(o.outputConfigMap).toEqual({ namespace: "aicr-validation", name: "report" });
  expect(o.outputPath).toBeUndefined();
  expect(o.format).toBe("json");
  const s = resolve({
    snapshot: "s.yaml",
    nodeSelectors: ["pool=gpu"],
    namespace: "ops",
    output: "cm://ops/r",
  });
  expect(s.capture).toBeUndefined();
  expect(s.placement.nodeSelector).toEqual({ pool: "gpu" });
  expect(s.outputConfigMap).toEqual({ namespace: "ops", name: "r" });
});

const PROVIDERS = `${import.meta.dir}/../../fixtures/providers`;

test("the provider dumps are read before any request and projected into the live capture's K8s readings", () => {
  const o = resolve({
    okeAddons: `${PROVIDERS}/oke-addons.json`,
    gkeGpuPools: `${PROVIDERS}/gke-gpu-pools.json`,
  });
  const subtypes = (o.capture?.providerReadings ?? []).map((s) => s.subtype);
  expect(subtypes).toEqual(["oke-addons", "gke-gpu-pools"]);
});

test("a provider dump with --snapshot is refused (only a live capture takes it), as is a missing file", () => {
  const withSnapshot = refused({ snapshot: "s.yaml", aksGpuPools: `${PROVIDERS}/aks-gpu-pools.json` });
  expect(withSnapshot.code).toBe("INVALID_REQUEST");
  expect(withSnapshot.message).toContain("--aks-gpu-pools");
  const missing = refused({ okeAddons: `${PROVIDERS}/no-such.json` });
  expect(missing.code).toBe("INVALID_REQUEST");
  expect(missing.message).toContain("no-such.json");
});
