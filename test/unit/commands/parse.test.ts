/**
 * The flag layer of `aicr snapshot` and `aicr validate`, in process: the value parsers
 * (commands/_parse.ts) and the option resolvers (_snapshot-flags.ts, _validate-flags.ts). Every
 * refusal is INVALID_REQUEST (exit 2) and names the flag and the value it was given.
 */
import { describe, expect, test } from "bun:test";
import { flagBoolean } from "../../../src/commands/_argv.ts";
import {
  badFlag,
  parseBool,
  parseCount,
  parseDuration,
  parseKeyValue,
  parseResourceList,
  parseToleration,
  qualifiedNameProblem,
  resourceNameProblem,
} from "../../../src/commands/_parse.ts";
import { resolveSnapshotOptions, type SnapshotFlags } from "../../../src/commands/_snapshot-flags.ts";
import {
  parseSource,
  resolveValidateOptions,
  type ValidateFlags,
} from "../../../src/commands/_validate-flags.ts";
import { AicrError } from "../../../src/core/errors.ts";
import { DEFAULT_IMAGE } from "../../../src/core/version.ts";
import { DEFAULT_TIMEOUT_MS } from "../../../src/remote/options.ts";
import {
  CAPTURE_JOB_PREFIX,
  DEFAULT_VALIDATE_NAMESPACE,
  DEFAULT_VALIDATE_TIMEOUT_MS,
} from "../../../src/validate/options.ts";
import { PHASES } from "../../../src/validate/recipe.ts";
import { thrown } from "../../support/reject.ts";

/** A refusal of `value` for `flag`: INVALID_REQUEST, the flag and the quoted value in the message. */
function expectRefused(fn: () => unknown, flag: string, value: string): AicrError {
  const e = thrown(fn);
  expect(e.code).toBe("INVALID_REQUEST");
  expect(e.message).toContain(flag);
  expect(e.message).toContain(JSON.stringify(value));
  expect(e.context).toMatchObject({ field: flag });
  return e;
}

describe("badFlag", () => {
  test("names the flag, quotes the value, shows the form; the remedy defaults to fixing the flag", () => {
    const e = badFlag("--timeout", "soon", "a duration");
    expect(e).toBeInstanceOf(AicrError);
    expect(e.code).toBe("INVALID_REQUEST");
    expect(e.exitCode).toBe(2);
    expect(e.message).toBe('invalid --timeout "soon": expected a duration');
    expect(e.remedy).toBe("fix --timeout and run again");
    expect(e.context).toEqual({ field: "--timeout", value: "soon" });
    expect(badFlag("--os", "x", "one of a, b", "pick one").remedy).toBe("pick one");
  });
});

describe("parseDuration", () => {
  test("Go-style durations, units combined, fractions", () => {
    const cases: [string, number][] = [
      ["500ms", 500],
      ["90s", 90_000],
      ["5m", 300_000],
      ["2h", 7_200_000],
      ["1h30m", 5_400_000],
      ["1m30s", 90_000],
      ["1.5s", 1_500],
      ["0.5h", 1_800_000],
      ["1h0m5s", 3_605_000],
    ];
    for (const [value, ms] of cases) expect([value, parseDuration("--timeout", value)]).toEqual([value, ms]);
  });

  test("negative, zero, empty, unitless and garbage values are refused", () => {
    for (const value of [
      "",
      "-1m",
      "-5s",
      "5",
      "5x",
      "m",
      "1m 30s",
      " 5m",
      "5m ",
      "abc",
      "1h-30m",
      "+5m",
      "1e3s",
    ]) {
      const e = expectRefused(() => parseDuration("--timeout", value), "--timeout", value);
      expect(e.message).toBe(
        `invalid --timeout ${JSON.stringify(value)}: expected a duration such as 5m, 90s or 1h30m`,
      );
    }
    for (const value of ["0s", "0m", "0ms", "0h0m"]) {
      const e = expectRefused(() => parseDuration("--timeout", value), "--timeout", value);
      expect(e.message).toBe(
        `invalid --timeout ${JSON.stringify(value)}: expected a duration greater than zero`,
      );
    }
    // Above the longest timer (2^31-1 ms) a timer fires at once: refused, not a run that times out at its start.
    for (const value of ["600h", "597h", "24000h"]) {
      const e = expectRefused(() => parseDuration("--timeout", value), "--timeout", value);
      expect(e.message).toContain("expected a duration of at most 596h");
    }
    expect(parseDuration("--timeout", "596h")).toBe(596 * 3_600_000);
  });
});

describe("qualifiedNameProblem", () => {
  test("[prefix/]name as label keys are written", () => {
    for (const key of ["app", "a", "nvidia.com/gpu.present", "example.com/x_y.z", "A-1", "a".repeat(63)])
      expect([key, qualifiedNameProblem(key)]).toEqual([key, undefined]);
    expect(qualifiedNameProblem("/name")).toBe("the prefix before '/' must be a DNS subdomain");
    expect(qualifiedNameProblem("Bad_Prefix/name")).toBe("the prefix before '/' must be a DNS subdomain");
    for (const key of ["", "example.com/", "-app", "app-", "has space", "a".repeat(64)])
      expect(qualifiedNameProblem(key)).toBe("the name must be 1-63 letters, digits, '-', '_' or '.'");
  });
});

describe("parseKeyValue (--node-selector)", () => {
  test("key=value with a qualified key; the value may be empty", () => {
    expect(parseKeyValue("--node-selector", "nvidia.com/gpu.present=true")).toEqual([
      "nvidia.com/gpu.present",
      "true",
    ]);
    expect(parseKeyValue("--node-selector", "pool=gpu-a_1.x")).toEqual(["pool", "gpu-a_1.x"]);
    expect(parseKeyValue("--node-selector", "role=")).toEqual(["role", ""]);
    expect(parseKeyValue("--node-selector", `k=${"v".repeat(63)}`)).toEqual(["k", "v".repeat(63)]);
  });

  test("no '=', an empty or bad key, a bad or too long value are refused, with an example", () => {
    const cases: [string, string][] = [
      ["pool", "no '='"],
      ["", "no '='"],
      ["=gpu", "the name must be 1-63 letters, digits, '-', '_' or '.'"],
      ["bad key=v", "the name must be 1-63 letters, digits, '-', '_' or '.'"],
      ["/pool=gpu", "the prefix before '/' must be a DNS subdomain"],
      ["pool=has space", "a bad label value"],
      ["pool=-gpu", "a bad label value"],
      [`pool=${"v".repeat(64)}`, "a bad label value"],
    ];
    for (const [value, problem] of cases) {
      const e = expectRefused(() => parseKeyValue("--node-selector", value), "--node-selector", value);
      expect(e.message).toBe(
        `invalid --node-selector ${JSON.stringify(value)}: expected key=value with a valid label key and value (${problem})`,
      );
      expect(e.remedy).toBe("e.g. --node-selector nvidia.com/gpu.present=true");
    }
  });
});

describe("parseToleration (--toleration)", () => {
  test("key=value:effect is Equal, key:effect is Exists, for each effect", () => {
    expect(parseToleration("--toleration", "nvidia.com/gpu=present:NoSchedule")).toEqual({
      key: "nvidia.com/gpu",
      operator: "Equal",
      value: "present",
      effect: "NoSchedule",
    });
    expect(parseToleration("--toleration", "dedicated=:NoExecute")).toEqual({
      key: "dedicated",
      operator: "Equal",
      value: "",
      effect: "NoExecute",
    });
    for (const effect of ["NoSchedule", "PreferNoSchedule", "NoExecute"])
      expect(parseToleration("--toleration", `nvidia.com/gpu:${effect}`)).toEqual({
        key: "nvidia.com/gpu",
        operator: "Exists",
        effect,
      });
  });

  test("a missing or unknown effect, an empty or bad key, a bad value are refused", () => {
    for (const value of [
      "",
      "nvidia.com/gpu",
      "nvidia.com/gpu:",
      "nvidia.com/gpu:Never",
      "nvidia.com/gpu:noschedule",
      ":NoSchedule",
      "=v:NoSchedule",
      "bad key:NoSchedule",
      "k=bad value:NoSchedule",
    ]) {
      const e = expectRefused(() => parseToleration("--toleration", value), "--toleration", value);
      expect(e.message).toBe(
        `invalid --toleration ${JSON.stringify(value)}: expected key=value:effect or key:effect, effect one of NoSchedule, PreferNoSchedule, NoExecute`,
      );
      expect(e.remedy).toBe("e.g. --toleration nvidia.com/gpu:NoSchedule");
    }
  });
});

describe("parseResourceList (--requests, --limits)", () => {
  test("name=quantity pairs, trimmed; every quantity form Kubernetes writes", () => {
    expect(parseResourceList("--requests", "cpu=2,memory=8Gi")).toEqual({ cpu: "2", memory: "8Gi" });
    expect(parseResourceList("--requests", " cpu = 500m , nvidia.com/gpu=1")).toEqual({
      cpu: "500m",
      "nvidia.com/gpu": "1",
    });
    for (const qty of [
      "0",
      "0.5",
      ".5",
      "1.",
      "+1",
      "1e3",
      "1E-3",
      "128974848",
      "129M",
      "123Mi",
      "1Ki",
      "2Ei",
    ])
      expect(parseResourceList("--limits", `memory=${qty}`)).toEqual({ memory: qty });
  });

  test("an empty list or item, a missing name or quantity, a negative or garbage quantity are refused", () => {
    const cases: [string, string][] = [
      ["", ""],
      ["cpu", "cpu"],
      ["cpu=", "cpu="],
      ["=2", "=2"],
      ["cpu=2,", ""],
      ["cpu=2,,memory=1Gi", ""],
      ["cpu=-1", "cpu=-1"],
      ["cpu=two", "cpu=two"],
      ["memory=8GB", "memory=8GB"],
      ["memory=8 Gi", "memory=8 Gi"],
      ["bad name=1", "bad name=1"],
    ];
    for (const [value, item] of cases) {
      const e = expectRefused(() => parseResourceList("--requests", value), "--requests", value);
      expect(e.message).toBe(
        `invalid --requests ${JSON.stringify(value)}: expected name=quantity pairs separated by commas, e.g. cpu=2,memory=8Gi`,
      );
      expect(e.remedy).toBe(`check the item ${JSON.stringify(item)}`);
    }
  });
});

describe("parseResourceList: names the apiserver takes", () => {
  test("cpu, memory, ephemeral-storage, hugepages-<size> and domain-qualified names", () => {
    expect(
      parseResourceList(
        "--requests",
        "cpu=1,memory=2Gi,ephemeral-storage=1Gi,hugepages-2Mi=4Mi,nvidia.com/gpu=1",
      ),
    ).toEqual({
      cpu: "1",
      memory: "2Gi",
      "ephemeral-storage": "1Gi",
      "hugepages-2Mi": "4Mi",
      "nvidia.com/gpu": "1",
    });
    expect(resourceNameProblem("example.com/toString")).toBeUndefined();
  });

  test("another name without a domain is refused, JavaScript built-ins included (issue 25, item 8)", () => {
    for (const name of ["constructor", "toString", "hasOwnProperty", "valueOf", "gpu", "storage"]) {
      const value = `cpu=1,${name}=2`;
      const e = expectRefused(() => parseResourceList("--limits", value), "--limits", value);
      expect(e.message).toContain(`${JSON.stringify(name)}: a name without a domain must be cpu, memory`);
      expect(e.remedy).toBe(`check the item ${JSON.stringify(`${name}=2`)}`);
    }
  });
});

describe("parseCount (--max-nodes-per-entry)", () => {
  test("whole numbers from zero", () => {
    expect(parseCount("--max-nodes-per-entry", "0")).toBe(0);
    expect(parseCount("--max-nodes-per-entry", "7")).toBe(7);
    expect(parseCount("--max-nodes-per-entry", "0100")).toBe(100);
  });

  test("negative, fractional, empty and garbage counts are refused", () => {
    for (const value of ["-1", "1.5", "", " 1", "1 ", "+1", "1e2", "ten", "0x10"]) {
      const e = expectRefused(
        () => parseCount("--max-nodes-per-entry", value),
        "--max-nodes-per-entry",
        value,
      );
      expect(e.message).toBe(
        `invalid --max-nodes-per-entry ${JSON.stringify(value)}: expected a whole number ≥ 0`,
      );
    }
  });
});

describe("parseBool and flagBoolean (--privileged, --require-gpu, --discover-network)", () => {
  test("true/1/yes and false/0/no; unset or empty keeps the default; booleans pass", () => {
    for (const v of ["true", "1", "yes", true]) expect(parseBool("--privileged", v, false)).toBe(true);
    for (const v of ["false", "0", "no", false]) expect(parseBool("--privileged", v, true)).toBe(false);
    expect(parseBool("--privileged", undefined, true)).toBe(true);
    expect(parseBool("--privileged", "", false)).toBe(false);
  });

  test("anything else is refused (spellings are exact)", () => {
    for (const value of ["maybe", "TRUE", "No", "2", "y", " true"]) {
      const e = expectRefused(() => parseBool("--privileged", value, true), "--privileged", value);
      expect(e.message).toBe(`invalid --privileged ${JSON.stringify(value)}: expected true or false`);
    }
  });

  test("the last spelling on the command line wins; --x=<v> is kept raw; nothing after --", () => {
    expect(flagBoolean([], "privileged")).toBeUndefined();
    expect(flagBoolean(["--privileged"], "privileged")).toBe(true);
    expect(flagBoolean(["--no-privileged"], "privileged")).toBe(false);
    expect(flagBoolean(["--privileged=no"], "privileged")).toBe("no");
    expect(flagBoolean(["--privileged", "--no-privileged"], "privileged")).toBe(false);
    expect(flagBoolean(["--no-privileged", "--privileged=yes"], "privileged")).toBe("yes");
    expect(flagBoolean(["--no-privileged=true"], "privileged")).toBe(false);
    expect(flagBoolean(["--no-privileged=no"], "privileged")).toBe(true);
    expect(flagBoolean(["--no-privileged=maybe"], "privileged")).toBe("maybe");
    expect(flagBoolean(["--", "--privileged"], "privileged")).toBeUndefined();
    expect(flagBoolean(["--privileged-mode"], "privileged")).toBeUndefined();
  });
});

const snapshotFlags = (extra: Partial<SnapshotFlags> = {}): SnapshotFlags => ({
  namespace: "gpu-operator",
  imagePullSecrets: [],
  nodeSelectors: [],
  tolerations: [],
  ...extra,
});

describe("resolveSnapshotOptions", () => {
  test("no flags: stdout, YAML, the release image, 5m, cleanup, privileged, GPU auto-targeting", () => {
    expect(resolveSnapshotOptions(snapshotFlags(), {})).toEqual({
      namespace: "gpu-operator",
      destination: { kind: "stdout" },
      format: "yaml",
      image: DEFAULT_IMAGE,
      imagePullSecrets: [],
      jobPrefix: undefined,
      serviceAccountName: undefined,
      nodeSelector: undefined,
      tolerations: undefined,
      timeoutMs: DEFAULT_TIMEOUT_MS,
      cleanup: true,
      privileged: true,
      requireGpu: false,
      runtimeClassName: undefined,
      os: undefined,
      requests: undefined,
      limits: undefined,
      discoverNetwork: false,
      maxNodesPerEntry: 0,
      debug: false,
      autoTarget: true,
      overwrite: false,
    });
  });

  test("every flag resolved; any placement flag turns auto-targeting off", () => {
    const o = resolveSnapshotOptions(
      snapshotFlags({
        output: "cm://gpu-operator/snap",
        image: "registry.example.com/aicr:v1",
        imagePullSecrets: ["regcred"],
        jobName: "team",
        serviceAccountName: "irsa",
        nodeSelectors: ["pool=gpu", "nvidia.com/gpu.present=true"],
        tolerations: ["nvidia.com/gpu:NoSchedule"],
        timeout: "90s",
        noCleanup: true,
        privileged: "false",
        os: "ubuntu",
        requests: "cpu=1",
        limits: "cpu=2,memory=1Gi",
        discoverNetwork: "yes",
        maxNodesPerEntry: "3",
        debug: true,
        overwrite: true,
      }),
      {},
    );
    expect(o).toMatchObject({
      destination: { kind: "configmap", ref: { namespace: "gpu-operator", name: "snap" } },
      format: "yaml",
      image: "registry.example.com/aicr:v1",
      imagePullSecrets: ["regcred"],
      jobPrefix: "team",
      serviceAccountName: "irsa",
      nodeSelector: { pool: "gpu", "nvidia.com/gpu.present": "true" },
      tolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }],
      timeoutMs: 90_000,
      cleanup: false,
      privileged: false,
      os: "ubuntu",
      requests: { cpu: "1" },
      limits: { cpu: "2", memory: "1Gi" },
      discoverNetwork: true,
      maxNodesPerEntry: 3,
      debug: true,
      autoTarget: false,
      overwrite: true,
    });
    expect(resolveSnapshotOptions(snapshotFlags({ output: "out.json", format: "json" }), {})).toMatchObject({
      destination: { kind: "file", path: "out.json" },
      format: "json",
    });
    expect(resolveSnapshotOptions(snapshotFlags({ requireGpu: true }), {}).autoTarget).toBe(false);
    expect(resolveSnapshotOptions(snapshotFlags({ runtimeClass: "nvidia" }), {})).toMatchObject({
      runtimeClassName: "nvidia",
      autoTarget: false,
    });
  });

  test("environment fallbacks, each beaten by its flag", () => {
    const env = {
      AICR_IMAGE: "env.example.com/aicr:v2",
      AICR_RUNTIME_CLASS: "nvidia",
      AICR_OS: "rhel",
      AICR_REQUESTS: "cpu=1",
      AICR_LIMITS: "memory=2Gi",
      AICR_DISCOVER_NETWORK: "1",
      AICR_MAX_NODES_PER_ENTRY: "4",
    };
    expect(resolveSnapshotOptions(snapshotFlags(), env)).toMatchObject({
      image: "env.example.com/aicr:v2",
      runtimeClassName: "nvidia",
      os: "rhel",
      requests: { cpu: "1" },
      limits: { memory: "2Gi" },
      discoverNetwork: true,
      maxNodesPerEntry: 4,
      autoTarget: false,
    });
    expect(
      resolveSnapshotOptions(
        snapshotFlags({
          image: "flag.example.com/aicr:v3",
          runtimeClass: "other",
          os: "cos",
          requests: "cpu=2",
          limits: "memory=4Gi",
          discoverNetwork: false,
          maxNodesPerEntry: "0",
        }),
        env,
      ),
    ).toMatchObject({
      image: "flag.example.com/aicr:v3",
      runtimeClassName: "other",
      os: "cos",
      requests: { cpu: "2" },
      limits: { memory: "4Gi" },
      discoverNetwork: false,
      maxNodesPerEntry: 0,
    });
    expect(resolveSnapshotOptions(snapshotFlags(), { AICR_REQUIRE_GPU: "true" })).toMatchObject({
      requireGpu: true,
      autoTarget: false,
    });
  });

  test("each bad value is refused naming its flag and the value, before anything else happens", () => {
    const cases: [Partial<SnapshotFlags>, string, string][] = [
      [{ namespace: "Bad_NS" }, "--namespace", "Bad_NS"],
      [{ namespace: "" }, "--namespace", ""],
      [{ format: "xml" }, "--format", "xml"],
      [{ output: "cm://gpu-operator/snap", format: "json" }, "--format", "json"],
      [{ os: "windows" }, "--os", "windows"],
      [{ image: "ghcr.io/nvidia/aicr v1" }, "--image", "ghcr.io/nvidia/aicr v1"],
      [{ image: `r/${"a".repeat(511)}` }, "--image", `r/${"a".repeat(511)}`],
      [{ imagePullSecrets: ["RegCred"] }, "--image-pull-secret", "RegCred"],
      [{ nodeSelectors: ["pool"] }, "--node-selector", "pool"],
      [{ tolerations: ["gpu:Never"] }, "--toleration", "gpu:Never"],
      [{ timeout: "-5m" }, "--timeout", "-5m"],
      [{ timeout: "0s" }, "--timeout", "0s"],
      [{ timeout: "soon" }, "--timeout", "soon"],
      [{ privileged: "maybe" }, "--privileged", "maybe"],
      [{ requireGpu: "perhaps" }, "--require-gpu", "perhaps"],
      [{ discoverNetwork: "2" }, "--discover-network", "2"],
      [{ requests: "cpu=two" }, "--requests", "cpu=two"],
      [{ limits: "memory=-1Gi" }, "--limits", "memory=-1Gi"],
      [{ requests: "cpu=4", limits: "cpu=2" }, "--requests", "cpu=4"],
      [{ maxNodesPerEntry: "-1" }, "--max-nodes-per-entry", "-1"],
    ];
    for (const [flags, flag, value] of cases)
      expectRefused(() => resolveSnapshotOptions(snapshotFlags(flags), {}), flag, value);
  });

  test("a bad environment value is refused under the flag it stands for", () => {
    const cases: [Record<string, string>, string, string][] = [
      [{ AICR_REQUIRE_GPU: "maybe" }, "--require-gpu", "maybe"],
      [{ AICR_OS: "plan9" }, "--os", "plan9"],
      [{ AICR_IMAGE: "has space" }, "--image", "has space"],
      [{ AICR_REQUESTS: "cpu" }, "--requests", "cpu"],
      [{ AICR_LIMITS: "gpu=lots" }, "--limits", "gpu=lots"],
      [{ AICR_DISCOVER_NETWORK: "sure" }, "--discover-network", "sure"],
      [{ AICR_MAX_NODES_PER_ENTRY: "many" }, "--max-nodes-per-entry", "many"],
    ];
    for (const [env, flag, value] of cases)
      expectRefused(() => resolveSnapshotOptions(snapshotFlags(), env), flag, value);
  });

  test("a request above its limit names both, and the remedy says which to change", () => {
    const e = expectRefused(
      () => resolveSnapshotOptions(snapshotFlags({ requests: "memory=2Gi", limits: "memory=1Gi" }), {}),
      "--requests",
      "memory=2Gi",
    );
    expect(e.message).toBe(
      'invalid --requests "memory=2Gi": expected at most the limit memory=1Gi given with --limits',
    );
    expect(e.remedy).toBe("raise --limits memory to at least 2Gi, or lower the request");
    // Equal is allowed; a limit without a request too.
    expect(
      resolveSnapshotOptions(snapshotFlags({ requests: "memory=1024Mi", limits: "memory=1Gi,cpu=1" }), {}),
    ).toMatchObject({ requests: { memory: "1024Mi" }, limits: { memory: "1Gi", cpu: "1" } });
  });

  test("combinations that cannot work are refused with what to do instead", () => {
    const cm = thrown(() => resolveSnapshotOptions(snapshotFlags({ output: "cm://other/snap" }), {}));
    expect(cm.code).toBe("INVALID_REQUEST");
    expect(cm.message).toBe(
      'invalid --output "cm://other/snap": its namespace must be the run\'s namespace "gpu-operator"',
    );
    expect(cm.remedy).toContain("cm://gpu-operator/snap");
    expect(cm.context).toEqual({ field: "--output", value: "cm://other/snap" });

    const gpu = thrown(() =>
      resolveSnapshotOptions(snapshotFlags({ requireGpu: true, runtimeClass: "nvidia" }), {}),
    );
    expect(gpu.code).toBe("INVALID_REQUEST");
    expect(gpu.message).toBe('--require-gpu and --runtime-class "nvidia" cannot be combined');
    expect(gpu.context).toEqual({ field: "--require-gpu" });
    // From the environment too.
    expect(
      thrown(() =>
        resolveSnapshotOptions(snapshotFlags(), { AICR_REQUIRE_GPU: "yes", AICR_RUNTIME_CLASS: "nvidia" }),
      ).message,
    ).toBe('--require-gpu and --runtime-class "nvidia" cannot be combined');
  });

  test("a malformed cm:// output is refused by the URI parser, naming the URI", () => {
    const e = thrown(() => resolveSnapshotOptions(snapshotFlags({ output: "cm://gpu-operator" }), {}));
    expect(e.code).toBe("INVALID_REQUEST");
    expect(e.message).toContain('"cm://gpu-operator"');
  });
});

const validateFlags = (extra: Partial<ValidateFlags> = {}): ValidateFlags => ({
  recipe: "recipe.yaml",
  phases: [],
  skipChecks: [],
  ...extra,
});

describe("parseSource", () => {
  test("a file path, or cm://<namespace>/<name>; empty is refused naming the flag", () => {
    expect(parseSource("--recipe", "examples/recipe.yaml")).toEqual({
      kind: "file",
      path: "examples/recipe.yaml",
    });
    expect(parseSource("--snapshot", "cm://gpu-operator/snap")).toEqual({
      kind: "configmap",
      ref: { namespace: "gpu-operator", name: "snap" },
    });
    const e = expectRefused(() => parseSource("--snapshot", ""), "--snapshot", "");
    expect(e.message).toBe(
      'invalid --snapshot "": expected a file path, cm://<namespace>/<name> or an https:// URL',
    );
    expect(thrown(() => parseSource("--recipe", "cm://a/b/c")).code).toBe("INVALID_REQUEST");
  });
});

describe("resolveValidateOptions", () => {
  test("defaults: every phase, fail on error, JSON when stdout is not a terminal, a live capture", () => {
    const o = resolveValidateOptions(validateFlags(), {}, false);
    expect(o).toMatchObject({
      recipe: { kind: "file", path: "recipe.yaml" },
      snapshot: undefined,
      namespace: DEFAULT_VALIDATE_NAMESPACE,
      phases: [...PHASES],
      skipChecks: [],
      failOnError: true,
      failFast: false,
      noCluster: false,
      allowMissing: false,
      outputPath: undefined,
      format: "json",
      junitPath: undefined,
      image: undefined,
      timeoutMs: DEFAULT_VALIDATE_TIMEOUT_MS,
      cleanup: true,
    });
    // The capture is a snapshot run in the validation namespace, under the capture's Job prefix.
    expect(o.capture).toMatchObject({
      namespace: DEFAULT_VALIDATE_NAMESPACE,
      jobPrefix: CAPTURE_JOB_PREFIX,
      image: DEFAULT_IMAGE,
      timeoutMs: DEFAULT_VALIDATE_TIMEOUT_MS,
      cleanup: true,
      autoTarget: true,
    });
  });

  test("a table on a terminal unless an output file is given; -o stdout is stdout", () => {
    expect(resolveValidateOptions(validateFlags(), {}, true).format).toBe("table");
    expect(resolveValidateOptions(validateFlags({ output: "report.json" }), {}, true)).toMatchObject({
      format: "json",
      outputPath: "report.json",
    });
    expect(resolveValidateOptions(validateFlags({ output: "stdout" }), {}, false).outputPath).toBeUndefined();
    expect(resolveValidateOptions(validateFlags({ format: "table" }), {}, false).format).toBe("table");
  });

  test("phases: named ones in order, `all` expands, repeats collapse", () => {
    expect(resolveValidateOptions(validateFlags({ phases: ["deployment"] }), {}, false).phases).toEqual([
      "deployment",
    ]);
    expect(
      resolveValidateOptions(
        validateFlags({ phases: ["conformance", "deployment", "conformance"] }),
        {},
        false,
      ).phases,
    ).toEqual(["conformance", "deployment"]);
    expect(
      resolveValidateOptions(validateFlags({ phases: ["all", "deployment"] }), {}, false).phases,
    ).toEqual([...PHASES]);
  });

  test("--snapshot (file or cm://) means no capture; --no-cluster needs it", () => {
    const file = resolveValidateOptions(validateFlags({ snapshot: "snap.yaml", noCluster: true }), {}, false);
    expect(file).toMatchObject({
      snapshot: { kind: "file", path: "snap.yaml" },
      noCluster: true,
      capture: undefined,
    });
    expect(resolveValidateOptions(validateFlags({ snapshot: "cm://ns/snap" }), {}, false).snapshot).toEqual({
      kind: "configmap",
      ref: { namespace: "ns", name: "snap" },
    });
    const e = thrown(() => resolveValidateOptions(validateFlags({ noCluster: true }), {}, false));
    expect(e.code).toBe("INVALID_REQUEST");
    expect(e.message).toBe("--no-cluster needs --snapshot: there is no cluster to capture one from");
    expect(e.context).toEqual({ field: "--no-cluster" });
  });

  test("namespace, image and timeout: flag, then environment, then default; the capture follows", () => {
    const env = {
      AICR_NAMESPACE: "env-ns",
      AICR_VALIDATOR_IMAGE: "v.example.com/aicr:v1",
      AICR_IMAGE: "a.example.com/aicr:v1",
    };
    expect(resolveValidateOptions(validateFlags(), env, false)).toMatchObject({
      namespace: "env-ns",
      image: "v.example.com/aicr:v1",
      capture: { namespace: "env-ns", image: "a.example.com/aicr:v1" },
    });
    expect(
      resolveValidateOptions(validateFlags(), { AICR_IMAGE: "a.example.com/aicr:v1" }, false).image,
    ).toBe("a.example.com/aicr:v1");
    expect(
      resolveValidateOptions(
        validateFlags({
          namespace: "flag-ns",
          image: "f.example.com/aicr:v1",
          timeout: "2m",
          noCleanup: true,
        }),
        env,
        false,
      ),
    ).toMatchObject({
      namespace: "flag-ns",
      image: "f.example.com/aicr:v1",
      timeoutMs: 120_000,
      cleanup: false,
      capture: { namespace: "flag-ns", image: "f.example.com/aicr:v1", timeoutMs: 120_000, cleanup: false },
    });
  });

  test("a missing recipe is refused, with where to find one", () => {
    for (const recipe of [undefined, ""]) {
      const e = thrown(() => resolveValidateOptions(validateFlags({ recipe }), {}, false));
      expect(e.code).toBe("INVALID_REQUEST");
      expect(e.message).toBe("missing --recipe: validate needs a recipe to check against");
      expect(e.context).toEqual({ field: "--recipe" });
      expect(e.remedy).toContain("examples/recipe.yaml");
    }
  });

  test("each bad value is refused naming its flag and the value", () => {
    const cases: [Partial<ValidateFlags>, string, string][] = [
      [{ phases: ["deploy"] }, "--phase", "deploy"],
      [{ phases: ["deployment", ""] }, "--phase", ""],
      [{ format: "yaml" }, "--format", "yaml"],
      [{ output: "cm://ns/report" }, "--output", "cm://ns/report"],
      [{ timeout: "-1m" }, "--timeout", "-1m"],
      [{ timeout: "0s" }, "--timeout", "0s"],
      [{ timeout: "ten minutes" }, "--timeout", "ten minutes"],
      [{ snapshot: "" }, "--snapshot", ""],
      [{ namespace: "Bad_NS" }, "--namespace", "Bad_NS"],
      [{ image: "has space" }, "--image", "has space"],
    ];
    for (const [flags, flag, value] of cases)
      expectRefused(() => resolveValidateOptions(validateFlags(flags), {}, false), flag, value);
    expect(thrown(() => resolveValidateOptions(validateFlags({ phases: ["x"] }), {}, false)).message).toBe(
      'invalid --phase "x": expected one of deployment, performance, conformance, all',
    );
  });

  test("the capture's environment is read only when there is a capture to make", () => {
    expectRefused(
      () => resolveValidateOptions(validateFlags(), { AICR_OS: "plan9" }, false),
      "--os",
      "plan9",
    );
    expect(
      resolveValidateOptions(validateFlags({ snapshot: "snap.yaml" }), { AICR_OS: "plan9" }, false).capture,
    ).toBeUndefined();
  });
});
