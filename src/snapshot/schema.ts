import * as v from "valibot";
import { AicrError } from "../core/errors.ts";
import { yamlErrorAt } from "../core/input-file.ts";
import { parseYamlDocument } from "../core/yaml.ts";

/** The measurement types a snapshot may carry, in the order collectors emit them. */
export const MEASUREMENT_TYPES = ["K8s", "GPU", "OS", "SystemD", "NodeTopology", "NetworkTopology"] as const;

export const SNAPSHOT_API_VERSION = "aicr.run/v1";
/**
 * apiVersions read. The original's v0.11.1 wrote `aicr.nvidia.com/v1alpha1` with the same document
 * shape (its subtypes lack only `items`, which is optional), so its snapshots read as they are; the
 * v1alpha2/v1alpha3 forms the original retired stay refused.
 */
export const READ_API_VERSIONS = [SNAPSHOT_API_VERSION, "aicr.nvidia.com/v1alpha1"] as const;
export const SNAPSHOT_KIND = "Snapshot";

const READING_EXPECTED = "expected a string, number or boolean";
const STRING_MAP_EXPECTED = "expected a map of strings";
const MAP_EXPECTED = "expected a map";

const ReadingSchema = v.union([v.string(), v.pipe(v.number(), v.finite()), v.boolean()], READING_EXPECTED);
const ReadingsSchema = v.record(v.string(), ReadingSchema, "expected a map of readings");
export type Reading = v.InferOutput<typeof ReadingSchema>;
export type Readings = Record<string, Reading>;
const StringMapSchema = v.record(v.string(), v.string(STRING_MAP_EXPECTED), STRING_MAP_EXPECTED);

// Seconds or fractions, always UTC: the agent writes `new Date().toISOString()` without milliseconds.
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/**
 * `null` (or nothing) where a list or map is expected reads as empty: the original's JSON output writes
 * an empty collector's nil map or list that way (`"subtypes": null`, `"data": null`).
 */
const orAbsent = <T extends v.GenericSchema>(schema: T) => v.optional(v.nullable(schema));

export interface Item {
  context?: Record<string, string>;
  data: Readings;
}

export interface Subtype {
  subtype: string;
  data: Readings;
  context?: Record<string, string>;
  /** Ordered records written by newer collectors (the original's NetworkTopology). */
  items?: Item[];
}

const ItemSchema = v.pipe(
  v.strictObject({ context: orAbsent(StringMapSchema), data: v.nullish(ReadingsSchema) }, MAP_EXPECTED),
  v.transform(({ context, data }): Item => (context ? { context, data: data ?? {} } : { data: data ?? {} })),
);

const SubtypeSchema = v.pipe(
  v.strictObject(
    {
      subtype: v.pipe(v.string("expected a string"), v.nonEmpty("expected a non-empty subtype name")),
      data: v.nullish(ReadingsSchema),
      context: orAbsent(StringMapSchema),
      items: orAbsent(v.array(ItemSchema, "expected a list of items")),
    },
    MAP_EXPECTED,
  ),
  v.transform(({ subtype, data, context, items }): Subtype => {
    const out: Subtype = { subtype, data: data ?? {} };
    if (context) out.context = context;
    if (items) out.items = items;
    return out;
  }),
);

const MeasurementSchema = v.pipe(
  v.strictObject(
    {
      type: v.picklist(MEASUREMENT_TYPES, `expected one of ${MEASUREMENT_TYPES.join(", ")}`),
      subtypes: v.nullish(v.array(SubtypeSchema, "expected a list of subtypes")),
    },
    MAP_EXPECTED,
  ),
  v.transform(({ type, subtypes }): Measurement => ({ type, subtypes: subtypes ?? [] })),
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
          { type: "object", origin: "value", input: { ...m }, key: "type", value: m.type },
        ],
      });
    });
  }),
);

const ENVELOPE_KEYS = ["apiVersion", "kind", "metadata"] as const;

export const SnapshotSchema = v.strictObject(
  {
    apiVersion: v.picklist(
      READ_API_VERSIONS,
      `expected ${READ_API_VERSIONS.map((a) => `"${a}"`).join(" or ")}`,
    ),
    kind: v.literal(SNAPSHOT_KIND, `expected "${SNAPSHOT_KIND}"`),
    metadata: MetadataSchema,
    measurements: MeasurementsSchema,
  },
  "expected a snapshot document (a map with apiVersion, kind, metadata, measurements)",
);

/** The shape of the original's CLI test fixture: measurements alone, no envelope at all. */
const BareSnapshotSchema = v.strictObject(
  { measurements: MeasurementsSchema },
  "expected a snapshot document (a map with apiVersion, kind, metadata, measurements)",
);

export type MeasurementType = (typeof MEASUREMENT_TYPES)[number];
export interface Measurement {
  type: MeasurementType;
  subtypes: Subtype[];
}
/** metadata as read: a map of strings; empty when the document had no envelope. */
export type SnapshotMetadata = Record<string, string>;
export interface Snapshot {
  apiVersion: (typeof READ_API_VERSIONS)[number];
  kind: typeof SNAPSHOT_KIND;
  metadata: SnapshotMetadata;
  measurements: Measurement[];
}

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

/** What a value is, without the value: how a mismatch names what it got. */
function kindOfValue(x: unknown): string {
  if (x === null) return "null";
  if (x === undefined) return "nothing";
  if (Array.isArray(x)) return "a list";
  if (typeof x === "object") return "a map";
  if (typeof x === "string") return `a string of ${x.length} characters`;
  return `a ${typeof x}`;
}

/**
 * An issue's message without the value it received: valibot's default messages quote it, and a
 * document given by mistake (a credential file, /etc/shadow) must not be echoed. Messages of our own
 * (no "received") pass as they are.
 */
export function issueMessage(issue: v.BaseIssue<unknown>): string {
  if (!/\bbut received\b/.test(issue.message)) return issue.message;
  return `expected ${issue.expected ?? "another value"}, got ${kindOfValue(issue.input)}`;
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
  return `${path}: ${issueMessage(issue)}`;
}

type NativeYaml = { parse(text: string): unknown };
const nativeYaml = (globalThis as { Bun?: { YAML?: NativeYaml } }).Bun?.YAML;

export interface ParseSnapshotOptions {
  /** Bun's built-in YAML parser, for documents aicr's own serializer wrote (see parseSnapshot). */
  native?: boolean;
  /**
   * Told once when the document has no envelope (apiVersion, kind and metadata all absent, as in the
   * original's measurements-only test snapshots): the caller warns with its own logger. Without it the
   * fact is silent; the document reads as an aicr.run/v1 Snapshot with empty metadata either way.
   */
  onEnvelopeMissing?: (source: string) => void;
}

const isMap = (raw: unknown): raw is Record<string, unknown> =>
  raw !== null && typeof raw === "object" && !Array.isArray(raw);

/** True when the map has none of apiVersion, kind, metadata (a half envelope is an error instead). */
const lacksEnvelope = (raw: unknown): raw is Record<string, unknown> =>
  isMap(raw) && ENVELOPE_KEYS.every((key) => !(key in raw));

/** How the missing envelope is said, once per document read. */
export const envelopeMissingMessage = (source: string): string =>
  `snapshot ${source} has no apiVersion, kind or metadata: read as ${SNAPSHOT_API_VERSION} ${SNAPSHOT_KIND} from its measurements alone`;

/**
 * Reads a snapshot written as YAML or JSON; every schema problem is reported with its path.
 * What the Go original writes reads too: its v1alpha1 apiVersion, `null` for an empty list or map in
 * its JSON, and a document with measurements only (see onEnvelopeMissing).
 * `native` (for documents aicr's own serializer wrote, e.g. the agent's result): Bun's built-in parser,
 * some 40× faster than the yaml package when cold; it agrees with it on every scalar form the serializer
 * writes (test/unit/snapshot-native-yaml.test.ts). Anything it does not read as one map (a syntax error,
 * several documents) is read again strictly, so those errors are the same either way; a duplicate key
 * (which the serializer never writes) is not reported in this mode. Files a user hands in are read
 * strictly: duplicate keys are errors there, as YAML 1.2 says.
 */
export function parseSnapshot(text: string, source: string, options: ParseSnapshotOptions = {}): Snapshot {
  let raw: unknown;
  try {
    raw = options.native && nativeYaml ? readNative(nativeYaml, text) : undefined;
    raw ??= parseYamlDocument(text);
  } catch (err) {
    // the position alone: the parser's message quotes the text around it
    throw new AicrError(
      "INVALID_REQUEST",
      `Snapshot "${source}" is not valid YAML or JSON ${yamlErrorAt(err)}`,
      {
        remedy: "Pass a file written by `aicr snapshot` (YAML or JSON).",
        context: { source },
      },
    );
  }
  if (lacksEnvelope(raw) && !("measurements" in raw) && Object.keys(raw).length > 0) {
    // Not a snapshot at all (a file given by mistake): its keys and values are not listed back.
    throw new AicrError(
      "INVALID_REQUEST",
      `Snapshot "${source}" is not a snapshot: expected a map with apiVersion, kind, metadata and measurements (it holds none of them)`,
      { remedy: "Pass a file written by `aicr snapshot` (YAML or JSON).", context: { source } },
    );
  }
  if (lacksEnvelope(raw)) {
    const bare = v.safeParse(BareSnapshotSchema, raw);
    if (!bare.success) throw mismatch(source, bare.issues);
    options.onEnvelopeMissing?.(source);
    return { apiVersion: SNAPSHOT_API_VERSION, kind: SNAPSHOT_KIND, metadata: {}, ...bare.output };
  }
  const result = v.safeParse(SnapshotSchema, raw);
  if (result.success) return result.output;
  throw mismatch(source, result.issues);
}

function mismatch(source: string, issues: readonly v.BaseIssue<unknown>[]): AicrError {
  const problems = issues.map(describeIssue);
  return new AicrError(
    "INVALID_REQUEST",
    `Snapshot "${source}" does not match ${SNAPSHOT_API_VERSION} ${SNAPSHOT_KIND}: ${problems.length} problem(s):\n  ${problems.join("\n  ")}`,
    {
      remedy: "Fix the listed fields, or take a fresh snapshot with `aicr snapshot`.",
      context: { source, problems },
    },
  );
}
