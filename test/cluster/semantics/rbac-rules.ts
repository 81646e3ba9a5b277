/** Rule matching (RuleAllows) and covering (Covers / BreakdownRule / CompactRules) as in kube's rbac packages. */
import type { Attributes, PolicyRule } from "./rbac-types.ts";
import { isResourceAttributes } from "./rbac-types.ts";

const has = (set: readonly string[] | undefined, v: string): boolean => (set ?? []).includes(v);
const hasAll = (set: readonly string[] | undefined, vs: readonly string[] | undefined): boolean =>
  (vs ?? []).every((v) => has(set, v));

function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const r of rule.resources ?? []) {
    if (r === "*" || r === combined) return true;
    if (subresource !== "" && r === `*/${subresource}`) return true;
  }
  return false;
}

function nonResourceUrlMatches(ruleUrl: string, path: string): boolean {
  if (ruleUrl === "*" || ruleUrl === path) return true;
  return ruleUrl.endsWith("*") && path.startsWith(ruleUrl.replace(/\*+$/, ""));
}

export function ruleAllows(attrs: Attributes, rule: PolicyRule): boolean {
  const verbOk = has(rule.verbs, "*") || has(rule.verbs, attrs.verb);
  if (!verbOk) return false;
  if (!isResourceAttributes(attrs))
    return (rule.nonResourceURLs ?? []).some((u) => nonResourceUrlMatches(u, attrs.path));
  const sub = attrs.subresource ?? "";
  const combined = sub ? `${attrs.resource}/${sub}` : attrs.resource;
  const groupOk = has(rule.apiGroups, "*") || has(rule.apiGroups, attrs.group);
  // A rule naming resourceNames never matches a request without a name (list, watch, create).
  const nameOk = (rule.resourceNames ?? []).length === 0 || has(rule.resourceNames, attrs.name ?? "");
  return groupOk && nameOk && resourceMatches(rule, combined, sub);
}

/** Splits a rule into atomic (group, resource, verb[, name]) and (url, verb) rules. */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs) {
        const base = { apiGroups: [group], resources: [resource], verbs: [verb] };
        if ((rule.resourceNames ?? []).length > 0) {
          for (const n of rule.resourceNames!) out.push({ ...base, resourceNames: [n] });
        } else out.push(base);
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) {
    for (const verb of rule.verbs) out.push({ nonResourceURLs: [url], verbs: [verb] });
  }
  return out;
}

function resourceCoversAll(
  owner: readonly string[] | undefined,
  wanted: readonly string[] | undefined,
): boolean {
  if (has(owner, "*") || hasAll(owner, wanted)) return true;
  for (const path of wanted ?? []) {
    if (has(owner, path)) continue;
    const slash = path.indexOf("/");
    if (slash < 0) return false;
    if (!has(owner, `*/${path.slice(slash + 1)}`)) return false;
  }
  return true;
}

function nonResourceUrlsCoverAll(
  owner: readonly string[] | undefined,
  wanted: readonly string[] | undefined,
): boolean {
  return (wanted ?? []).every((w) =>
    (owner ?? []).some((o) => o === w || (o.endsWith("*") && w.startsWith(o.slice(0, -1)))),
  );
}

export function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = has(owner.verbs, "*") || hasAll(owner.verbs, sub.verbs);
  const groups = has(owner.apiGroups, "*") || hasAll(owner.apiGroups, sub.apiGroups);
  const ownerNames = owner.resourceNames ?? [];
  const names =
    (sub.resourceNames ?? []).length === 0
      ? ownerNames.length === 0
      : ownerNames.length === 0 || hasAll(ownerNames, sub.resourceNames);
  return (
    verbs &&
    groups &&
    names &&
    resourceCoversAll(owner.resources, sub.resources) &&
    nonResourceUrlsCoverAll(owner.nonResourceURLs, sub.nonResourceURLs)
  );
}

/** Covers: whether ownerRules grant everything in servantRules; returns the uncovered atomic rules. */
export function covers(ownerRules: readonly PolicyRule[], servantRules: readonly PolicyRule[]): PolicyRule[] {
  const missing: PolicyRule[] = [];
  for (const servant of servantRules) {
    for (const sub of breakdownRule(servant)) {
      if (!ownerRules.some((o) => ruleCovers(o, sub))) missing.push(sub);
    }
  }
  return missing;
}

/** CompactRules: merges the verbs of simple single-group/single-resource rules. */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const r of rules) {
    const isSimple =
      (r.nonResourceURLs ?? []).length === 0 &&
      (r.apiGroups ?? []).length === 1 &&
      (r.resources ?? []).length === 1 &&
      (r.resourceNames ?? []).length <= 1;
    if (!isSimple) {
      out.push(r);
      continue;
    }
    const key = JSON.stringify([r.apiGroups, r.resources, r.resourceNames ?? []]);
    const existing = simple.get(key);
    if (existing) existing.verbs = [...existing.verbs, ...r.verbs];
    else simple.set(key, { ...r, verbs: [...r.verbs] });
  }
  return [...out, ...simple.values()];
}

/** Go's %q applied to a []string: ["a" "b"]. */
export function goQuoteList(items: readonly string[]): string {
  return `[${items.map((i) => JSON.stringify(i)).join(" ")}]`;
}

/** rbacv1helpers.CompactString. */
export function compactRuleString(r: PolicyRule): string {
  const parts: string[] = [];
  if ((r.apiGroups ?? []).length > 0) parts.push(`APIGroups:${goQuoteList(r.apiGroups!)}`);
  if ((r.resources ?? []).length > 0) parts.push(`Resources:${goQuoteList(r.resources!)}`);
  if ((r.nonResourceURLs ?? []).length > 0) parts.push(`NonResourceURLs:${goQuoteList(r.nonResourceURLs!)}`);
  if ((r.resourceNames ?? []).length > 0) parts.push(`ResourceNames:${goQuoteList(r.resourceNames!)}`);
  if (r.verbs.length > 0) parts.push(`Verbs:${goQuoteList(r.verbs)}`);
  return `{${parts.join(", ")}}`;
}
