import * as v from "valibot";
import { parse as parseYaml } from "yaml";
import { AicrError } from "../core/errors.ts";

/** The measurement types a snapshot may carry, in the order collectors emit them. */
export const MEASUREMENT_TYPES = ["K8s", "GPU", "OS", "SystemD", "NodeTopology", "NetworkTopology"] as const;

export const SNAPSHOT_API_VERSION = "aicr.run/v1";
export const SNAPSHOT_KIND = "Snapshot";

const READING_EXPECTED = "expected a string, number or boolean";
const STRING_MAP_EXPECTED = "expected a map of strings";
const MAP_EXPECTED = "expected a map";

const ReadingSchema = v.union([v.string(), v.pipe(v.number(), v.finite()), v.boolean()], READING_EXPECTED);
const ReadingsSchema = v.record(v.string(), ReadingSchema, "expected a map of readings");
const StringMapSchema = v.record(v.string(), v.string(STRING_MAP_EXPECTED), STRING_MAP_EXPECTED);

// Seconds or fractions, always UTC: the agent writes `new Date().toISOString()` without milliseconds.
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

const SubtypeSchema = v.strictObject(
  {
    subtype: v.pipe(v.string("expected a string"), v.nonEmpty("expected a non-empty subtype name")),
    data: ReadingsSchema,
    context: v.optional(StringMapSchema),
    // Ordered records written by newer reference collectors; accepted so their snapshots read back.
    items: v.optional(
      v.array(v.strictObject({ context: v.optional(StringMapSchema), data: ReadingsSchema }, MAP_EXPECTED)),
    ),
  },
  MAP_EXPECTED,
);

const MeasurementSchema = v.strictObject(
  {
    type: v.picklist(MEASUREMENT_TYPES, `expected one of ${MEASUREMENT_TYPES.join(", ")}`),
    subtypes: v.array(SubtypeSchema, "expected a list of subtypes"),
  },
  MAP_EXPECTED,
);

const MetadataSchema = v.objectWithRest(
  {
    timestamp: v.pipe(
      v.string("expected a string"),
      v.regex(RFC3339_UTC, "expected a UTC RFC 3339 timestamp such as 2026-01-31T10:30:00Z"),
    ),
    version: v.string("expected a string"),
    "source-node": v.string("expected a string"),
  },
  v.string("expected a string"),
  "expected a map of strings",
);

const MeasurementsSchema = v.pipe(
  v.array(MeasurementSchema, "expected a list of measurements"),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const firstIndex = new Map<string, number>();
    dataset.value.forEach((m, index) => {
      const earlier = firstIndex.get(m.type);
      if (earlier === undefined) {
        firstIndex.set(m.type, index);
        return;
      }
      addIssue({
        message: `type "${m.type}" already appears at measurements[${earlier}]; each type may appear once`,
        path: [
          { type: "array", origin: "value", input: dataset.value, key: index, value: m },
          { type: "object", origin: "value", input: m, key: "type", value: m.type },
        ],
      });
    });
  }),
);

export const SnapshotSchema = v.strictObject(
  {
    apiVersion: v.literal(SNAPSHOT_API_VERSION, `expected "${SNAPSHOT_API_VERSION}"`),
    kind: v.literal(SNAPSHOT_KIND, `expected "${SNAPSHOT_KIND}"`),
    metadata: MetadataSchema,
    measurements: MeasurementsSchema,
  },
  "expected a snapshot document (a map with apiVersion, kind, metadata, measurements)",
);

export type Snapshot = v.InferOutput<typeof SnapshotSchema>;
export type Measurement = v.InferOutput<typeof MeasurementSchema>;
export type Subtype = v.InferOutput<typeof SubtypeSchema>;
export type Reading = v.InferOutput<typeof ReadingSchema>;
export type Readings = v.InferOutput<typeof ReadingsSchema>;
export type MeasurementType = (typeof MEASUREMENT_TYPES)[number];

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** `measurements[2].subtypes[0].data.gpu-count`; keys that are not plain words are quoted. */
export function formatIssuePath(issue: v.BaseIssue<unknown>): string {
  let out = "";
  for (const item of issue.path ?? []) {
    const key = item.key;
    if (typeof key === "number") out += `[${key}]`;
    else if (typeof key === "string" && PLAIN_KEY.test(key)) out += out ? `.${key}` : key;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out || "(document)";
}

function readNative(yaml: NativeYaml, text: string): unknown {
  try {
    const doc = yaml.parse(text);
    return doc !== null && typeof doc === "object" && !Array.isArray(doc) ? doc : undefined;
  } catch {
    return undefined;
  }
}

const OBJECT_ISSUES = new Set(["strict_object", "object_with_rest", "object"]);

function describeIssue(issue: v.BaseIssue<unknown>): string {
  const path = formatIssuePath(issue);
  // Object schemas report unknown and missing keys with their own (object-level) message; say what happened.
  if (OBJECT_ISSUES.has(issue.type) && issue.path?.length) {
    if (issue.expected === "never") return `${path}: unknown key`;
    if (issue.received === "undefined") return `${path}: required but missing`;
  }
  return `${path}: ${issue.message}`;
}

type NativeYaml = { parse(text: string): unknown };
const nativeYaml = (globalThis as { Bun?: { YAML?: NativeYaml } }).Bun?.YAML;

/**
 * Reads a snapshot written as YAML or JSON; every schema problem is reported with its path.
 * `native` (for documents aicr's own serializer wrote, e.g. the agent's result): Bun's built-in parser,
 * some 40× faster than the yaml package when cold; it agrees with it on every scalar form the serializer
 * writes (test/unit/snapshot-native-yaml.test.ts). Anything it does not read as one map (a syntax error,
 * several documents) is read again strictly, so those errors are the same either way; a duplicate key
 * (which the serializer never writes) is not reported in this mode. Files a user hands in are read
 * strictly: duplicate keys are errors there, as YAML 1.2 says.
 */
export function parseSnapshot(text: string, source: string, options: { native?: boolean } = {}): Snapshot {
  let raw: unknown;
  try {
    raw = options.native && nativeYaml ? readNative(nativeYaml, text) : undefined;
    raw ??= parseYaml(text, { prettyErrors: true });
  } catch (err) {
    throw new AicrError("INVALID_REQUEST", `Snapshot "${source}" is not valid YAML or JSON`, {
      cause: err,
      remedy: "Pass a file written by `aicr snapshot` (YAML or JSON).",
      context: { source },
    });
  }
  const result = v.safeParse(SnapshotSchema, raw);
  if (result.success) return result.output;
  const problems = result.issues.map(describeIssue);
  throw new AicrError(
    "INVALID_REQUEST",
    `Snapshot "${source}" does not match ${SNAPSHOT_API_VERSION} ${SNAPSHOT_KIND}: ${problems.length} problem(s):\n  ${problems.join("\n  ")}`,
    {
      remedy: "Fix the listed fields, or take a fresh snapshot with `aicr snapshot`.",
      context: { source, problems },
    },
  );
}
