/**
 * The API fields the plan relies on, validated once where objects enter (valibot); pure.
 */
import * as v from "valibot";
import { AicrError } from "../core/errors.ts";
import type { PolicyRule } from "../rbac/rules.ts";
import type { LegacyKind } from "./_names.ts";
import type { ObservedObject } from "./types.ts";

const Strings = v.optional(v.array(v.string()), []);

const Rule = v.looseObject({
  apiGroups: Strings,
  resources: Strings,
  verbs: Strings,
  resourceNames: Strings,
  nonResourceURLs: Strings,
});

const Condition = v.looseObject({ type: v.string(), status: v.string() });

const Raw = v.looseObject({
  metadata: v.looseObject({
    name: v.string(),
    namespace: v.optional(v.string()),
    uid: v.pipe(v.string(), v.minLength(1)),
    resourceVersion: v.pipe(v.string(), v.minLength(1)),
    labels: v.optional(v.record(v.string(), v.string()), {}),
  }),
  rules: v.optional(v.nullable(v.array(Rule))),
  aggregationRule: v.optional(v.unknown()),
  roleRef: v.optional(v.looseObject({ apiGroup: v.string(), kind: v.string(), name: v.string() })),
  subjects: v.optional(
    v.nullable(
      v.array(v.looseObject({ kind: v.string(), name: v.string(), namespace: v.optional(v.string()) })),
    ),
  ),
  spec: v.optional(
    v.looseObject({
      template: v.optional(
        v.looseObject({
          spec: v.optional(v.looseObject({ serviceAccountName: v.optional(v.string()) })),
        }),
      ),
    }),
  ),
  status: v.optional(
    v.looseObject({
      active: v.optional(v.number()),
      conditions: v.optional(v.nullable(v.array(Condition))),
    }),
  ),
});

function unusual(rules: v.InferOutput<typeof Rule>[]): string[] {
  const out: string[] = [];
  for (const r of rules) {
    if (r.resourceNames.length > 0) out.push(`resourceNames ${r.resourceNames.join(",")}`);
    if (r.nonResourceURLs.length > 0) out.push(`nonResourceURLs ${r.nonResourceURLs.join(",")}`);
  }
  return out;
}

/** One object as read from the apiserver → what the plan needs; throws INTERNAL on a malformed answer. */
export function parseObserved(kind: LegacyKind, raw: unknown): ObservedObject {
  const result = v.safeParse(Raw, raw);
  if (!result.success) {
    const name = (raw as { metadata?: { name?: unknown } } | undefined)?.metadata?.name;
    const issue = result.issues[0];
    throw new AicrError(
      "INTERNAL",
      `the apiserver returned a ${kind} ${JSON.stringify(name ?? "?")} that cannot be read: ${v.getDotPath(issue) ?? "object"}: ${issue.message}`,
      {
        remedy:
          "inspect it with kubectl get -o yaml; aicr keeps objects it cannot read, so delete it by hand if it is legacy",
      },
    );
  }
  const o = result.output;
  const m = o.metadata;
  const observed: ObservedObject = {
    kind,
    ...(m.namespace ? { namespace: m.namespace } : {}),
    name: m.name,
    uid: m.uid,
    resourceVersion: m.resourceVersion,
    labels: m.labels,
  };
  if (kind === "Role" || kind === "ClusterRole") {
    const rules = o.rules ?? [];
    observed.rules = rules.map(
      (r): PolicyRule => ({ apiGroups: r.apiGroups, resources: r.resources, verbs: r.verbs }),
    );
    observed.unusualRules = unusual(rules);
    observed.aggregated = o.aggregationRule !== undefined && o.aggregationRule !== null;
  }
  if (kind === "RoleBinding" || kind === "ClusterRoleBinding") {
    observed.roleRef = o.roleRef;
    observed.subjects = (o.subjects ?? []).map((s) => ({
      kind: s.kind,
      name: s.name,
      ...(s.namespace ? { namespace: s.namespace } : {}),
    }));
  }
  if (kind === "Job") {
    const finished = (o.status?.conditions ?? []).some(
      (c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True",
    );
    observed.job = {
      serviceAccountName: o.spec?.template?.spec?.serviceAccountName || "default",
      activePods: o.status?.active ?? 0,
      finished,
    };
  }
  return observed;
}
