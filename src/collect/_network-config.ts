import * as v from "valibot";
import { AicrError, bulletList } from "../core/errors.ts";
import { INPUT_LIMITS, readInputText, yamlErrorAt } from "../core/input-file.ts";
import { parseYamlDocument } from "../core/yaml.ts";
import { formatIssuePath, issueMessage } from "../snapshot/schema.ts";

/**
 * A k8s-launch-kit (l8k) cluster-config.yaml, as `l8k discover` writes it: settings sections
 * (networkOperator, docaDriver, sriov, nvIpam, …) and `clusterConfig`, a list of node groups, each
 * with its machine type, link type, capabilities, PFs and worker nodes. Only the fields aicr reads
 * are checked; every other field is kept (as readings, see _network-readings.ts).
 */

/** Far above any real file (a few KiB); bounds what a bad path can make the agent read. */
export const MAX_CLUSTER_CONFIG_BYTES = INPUT_LIMITS.clusterConfig;

const str = v.string("expected a string");
const hexOrNumber = v.union([str, v.pipe(v.number(), v.integer())], "expected a PCI device ID such as 1021");
const count = v.pipe(v.number("expected a number"), v.integer("expected an integer"), v.minValue(0));

const PfSchema = v.looseObject(
  {
    deviceID: v.optional(hexOrNumber),
    rdmaDevice: v.optional(str),
    pciAddress: v.optional(str),
    networkInterface: v.optional(str),
    traffic: v.optional(str),
    rail: v.optional(count),
    psid: v.optional(str),
    partNumber: v.optional(str),
    model: v.optional(str),
    numaNode: v.optional(v.pipe(v.number("expected a number"), v.integer("expected an integer"))),
  },
  "expected a map",
);

const GroupSchema = v.looseObject(
  {
    identifier: v.optional(v.nullable(str)),
    machineType: v.optional(str),
    productType: v.optional(str),
    linkType: v.optional(str),
    capabilities: v.optional(
      v.nullable(
        v.looseObject(
          {
            nodes: v.optional(
              v.nullable(
                v.looseObject(
                  {
                    sriov: v.optional(v.boolean("expected true or false")),
                    rdma: v.optional(v.boolean("expected true or false")),
                    ib: v.optional(v.boolean("expected true or false")),
                  },
                  "expected a map",
                ),
              ),
            ),
          },
          "expected a map",
        ),
      ),
    ),
    pfs: v.optional(v.nullable(v.array(PfSchema, "expected a list of PFs"))),
    workerNodes: v.optional(v.nullable(v.array(str, "expected a list of node names"))),
    nodeSelector: v.optional(v.nullable(v.record(v.string(), str, "expected a map of strings"))),
  },
  "expected a map",
);

export const ClusterConfigSchema = v.looseObject(
  { clusterConfig: v.optional(v.nullable(v.array(GroupSchema, "expected a list of node groups"))) },
  "expected a map (a k8s-launch-kit cluster-config.yaml)",
);

export type ClusterConfig = v.InferOutput<typeof ClusterConfigSchema>;
export type ClusterConfigGroup = v.InferOutput<typeof GroupSchema>;

const REMEDY =
  "pass the cluster-config.yaml that `l8k discover` wrote (a regular YAML file of at most 1 MiB), or leave --cluster-config out";

const bad = (path: string, message: string, extra: { cause?: unknown; problems?: string[] } = {}) =>
  new AicrError("INVALID_REQUEST", `--cluster-config ${JSON.stringify(path)}: ${message}`, {
    remedy: REMEDY,
    cause: extra.cause,
    context: {
      field: "--cluster-config",
      value: path,
      ...(extra.problems ? { problems: extra.problems } : {}),
    },
  });

/** The most values (leaves) a cluster-config may hold: each becomes a reading of the snapshot. */
export const MAX_CLUSTER_CONFIG_VALUES = 10_000;

/** The leaves of a parsed document, counted up to `stop` (so a huge one is not walked whole). */
function countValues(value: unknown, stop: number): number {
  let n = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && n < stop) {
    const v = stack.pop();
    if (v !== null && typeof v === "object") stack.push(...Object.values(v));
    else n++;
  }
  return n;
}

/** Parses and checks a cluster-config.yaml's text; every problem named by its path. */
export function parseClusterConfig(text: string, path: string): ClusterConfig {
  let raw: unknown;
  try {
    raw = parseYamlDocument(text);
  } catch (err) {
    // the position alone: the parser's message quotes the file
    throw bad(path, `is not valid YAML ${yamlErrorAt(err)}`);
  }
  if (Array.isArray(raw) || (raw !== null && raw !== undefined && typeof raw !== "object"))
    throw bad(path, "expected a map (a k8s-launch-kit cluster-config.yaml) at the top level");
  // Each value becomes a reading (unknown fields are kept): bounded, so a file under its byte cap
  // cannot make a snapshot of a hundred thousand readings.
  const values = countValues(raw, MAX_CLUSTER_CONFIG_VALUES + 1);
  if (values > MAX_CLUSTER_CONFIG_VALUES)
    throw bad(path, `holds more than ${MAX_CLUSTER_CONFIG_VALUES} values; a cluster-config has a few dozen`);
  const result = v.safeParse(ClusterConfigSchema, raw ?? {});
  if (result.success) return result.output;
  const problems = result.issues.map((i) => `${formatIssuePath(i)}: ${issueMessage(i)}`);
  throw bad(path, `does not look like a k8s-launch-kit cluster config:${bulletList(problems)}`, { problems });
}

/**
 * Reads and checks `--cluster-config` / AICR_CLUSTER_CONFIG_PATH: a regular file of at most 1 MiB,
 * YAML, in the shape above. Any problem is INVALID_REQUEST naming the file and the field; the command
 * layer calls this before its first request, the collector again when it reads the file.
 */
export async function checkClusterConfigFile(path: string): Promise<ClusterConfig> {
  if (path.trim() === "") throw bad(path, "is empty; expected a file path");
  const text = readInputText(path, {
    flag: "--cluster-config",
    what: "a cluster-config.yaml",
    maxBytes: MAX_CLUSTER_CONFIG_BYTES,
    remedy: REMEDY,
  });
  return parseClusterConfig(text, path);
}
