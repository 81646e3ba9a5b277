import * as v from "valibot";
import { AicrError } from "../core/errors.ts";
import { yamlErrorAt } from "../core/input-file.ts";
import { parseYamlDocument } from "../core/yaml.ts";
import { formatIssuePath, issueMessage, MEASUREMENT_TYPES } from "../snapshot/schema.ts";

/** Validation phases, in the order they run. */
export const PHASES = ["deployment", "performance", "conformance"] as const;
export type Phase = (typeof PHASES)[number];

export const RECIPE_KIND = "RecipeMetadata";

const NAME_FORM = /^[^.\s]+\.[^.\s]+\..+$/;
const TYPE_NAMES = MEASUREMENT_TYPES.join(", ");

/** A YAML number or boolean is read back as the text it was written as (`24.04` stays "24.04" only if quoted). */
const ValueSchema = v.pipe(
  v.union([v.string(), v.number(), v.boolean()], 'expected a string such as ">= 1.32" or "ubuntu"'),
  v.transform((x) => String(x)),
  v.check((x) => x.trim() !== "", "expected a non-empty value"),
);

const constraintName = (typed: boolean) =>
  v.pipe(
    v.string("expected a string"),
    v.regex(NAME_FORM, "expected <Type>.<subtype>.<key>, e.g. K8s.server.version"),
    ...(typed
      ? [
          v.check(
            (name: string) => (MEASUREMENT_TYPES as readonly string[]).includes(name.split(".")[0] ?? ""),
            (issue) =>
              `unknown measurement type "${String(issue.input).split(".")[0]}"; expected one of ${TYPE_NAMES}`,
          ),
        ]
      : []),
  );

const constraint = (typed: boolean) =>
  v.strictObject({ name: constraintName(typed), value: ValueSchema }, "expected a map with name and value");

/** A check's name, as the performance phase's constraints are named (`nccl-all-reduce-bw`). */
const CHECK_NAME_FORM = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * A phase constraint is read by a validator: a reading path (`Deployment.gpu-operator.version`) or the
 * name of the check that reads it (`nccl-all-reduce-bw`); which check, the plan checks (_catalog.ts).
 */
const PhaseConstraintSchema = v.strictObject(
  {
    name: v.pipe(
      v.string("expected a string"),
      v.check(
        (name) => NAME_FORM.test(name) || CHECK_NAME_FORM.test(name),
        "expected <Type>.<subtype>.<key> (e.g. Deployment.gpu-operator.version) or a check's name (e.g. nccl-all-reduce-bw)",
      ),
    ),
    value: ValueSchema,
  },
  "expected a map with name and value",
);

const PhaseSchema = v.strictObject(
  {
    checks: v.optional(
      v.array(
        v.pipe(v.string("expected a check name"), v.nonEmpty("expected a check name")),
        "expected a list",
      ),
      [],
    ),
    // Consumed by validators (e.g. Deployment.gpu-operator.version), not by readiness.
    constraints: v.optional(v.array(PhaseConstraintSchema, "expected a list of {name, value}"), []),
  },
  "expected a map with checks and constraints",
);

const ValidationSchema = v.strictObject(
  Object.fromEntries(PHASES.map((p) => [p, v.optional(PhaseSchema)])) as Record<
    Phase,
    v.OptionalSchema<typeof PhaseSchema, undefined>
  >,
  `expected a map of phases (${PHASES.join(", ")})`,
);

export const RecipeSchema = v.object(
  {
    apiVersion: v.optional(v.string("expected a string")),
    kind: v.literal(RECIPE_KIND, `expected "${RECIPE_KIND}"`),
    metadata: v.optional(v.record(v.string(), v.unknown(), "expected a map")),
    spec: v.strictObject(
      {
        constraints: v.optional(v.array(constraint(true), "expected a list of {name, value}"), []),
        validation: v.optional(ValidationSchema),
        // Fields of full recipes that validate does not read; accepted so such a recipe loads.
        componentRefs: v.optional(v.unknown()),
        criteria: v.optional(v.unknown()),
        base: v.optional(v.unknown()),
        mixins: v.optional(v.unknown()),
        deploymentOrder: v.optional(v.unknown()),
      },
      "expected a map with constraints and validation",
    ),
  },
  `expected a recipe document (kind: ${RECIPE_KIND}, spec)`,
);

export type Recipe = v.InferOutput<typeof RecipeSchema>;
export type Constraint = { name: string; value: string };
export type PhaseSpec = v.InferOutput<typeof PhaseSchema>;

function describeIssue(issue: v.BaseIssue<unknown>): string {
  const path = formatIssuePath(issue);
  if (issue.path?.length && (issue.type === "strict_object" || issue.type === "object")) {
    if (issue.expected === "never") return `${path}: unknown key`;
    if (issue.received === "undefined") return `${path}: required but missing`;
  }
  return `${path}: ${issueMessage(issue)}`;
}

/** Reads a recipe (YAML or JSON); every problem is reported with its path in the document. */
export function parseRecipe(text: string, source: string): Recipe {
  let raw: unknown;
  try {
    raw = parseYamlDocument(text);
  } catch (err) {
    // the position alone: the parser's message quotes the text around it
    throw new AicrError(
      "INVALID_REQUEST",
      `recipe ${JSON.stringify(source)} is not valid YAML or JSON ${yamlErrorAt(err)}`,
      {
        remedy: "fix the YAML syntax at the position shown",
        context: { source },
      },
    );
  }
  if (
    raw === null ||
    typeof raw !== "object" ||
    Array.isArray(raw) ||
    !["apiVersion", "kind", "spec"].some((k) => k in raw)
  )
    // Not a recipe at all (a file given by mistake): its keys and values are not listed back.
    throw new AicrError(
      "INVALID_REQUEST",
      `recipe ${JSON.stringify(source)} is not a recipe: expected a map with apiVersion, kind and spec`,
      { remedy: "pass a recipe file (see examples/recipe.yaml for the expected shape)", context: { source } },
    );
  const result = v.safeParse(RecipeSchema, raw);
  if (result.success) return result.output;
  const problems = result.issues.map(describeIssue);
  throw new AicrError(
    "INVALID_REQUEST",
    `recipe ${JSON.stringify(source)} is invalid: ${problems.length} problem(s):\n  ${problems.join("\n  ")}`,
    {
      remedy: "fix the listed fields (see examples/recipe.yaml for the expected shape)",
      context: { source, problems },
    },
  );
}

/** The phases that declare checks or constraints, in run order. */
export function declaredPhases(recipe: Recipe): Phase[] {
  return PHASES.filter((p) => recipe.spec.validation?.[p] !== undefined);
}

/** The value of a phase-level constraint (e.g. Deployment.gpu-operator.version), if the recipe sets it. */
export function phaseConstraint(recipe: Recipe, phase: Phase, name: string): string | undefined {
  return recipe.spec.validation?.[phase]?.constraints.find((c) => c.name === name)?.value;
}
