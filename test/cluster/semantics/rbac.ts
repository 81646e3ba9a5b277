/** RBAC evaluator: the rule resolution, authorization and escalation checks of kube-apiserver's RBAC authorizer. */

import { compactRuleString, compactRules, covers, goQuoteList, ruleAllows } from "./rbac-rules.ts";
import type {
  Attributes,
  BindingObject,
  PolicyRule,
  RbacSnapshot,
  ResourceAttributes,
  RoleObject,
  RoleRef,
  Subject,
  UserInfo,
} from "./rbac-types.ts";
import { isResourceAttributes, RBAC_GROUP, SYSTEM_MASTERS } from "./rbac-types.ts";
import { matchesLabels } from "./selectors.ts";

export {
  breakdownRule,
  compactRuleString,
  compactRules,
  covers,
  ruleAllows,
  ruleCovers,
} from "./rbac-rules.ts";
export * from "./rbac-types.ts";

export interface AuthorizationResult {
  allowed: boolean;
  reason: string;
}

function subjectApplies(user: UserInfo, s: Subject, bindingNamespace: string): boolean {
  switch (s.kind) {
    case "User":
      return s.name === user.username;
    case "Group":
      return user.groups.includes(s.name);
    case "ServiceAccount": {
      // A ServiceAccount subject without a namespace means the binding's own namespace.
      const ns = s.namespace || bindingNamespace;
      return ns !== "" && user.username === `system:serviceaccount:${ns}:${s.name}`;
    }
    default:
      return false;
  }
}

function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === "ServiceAccount") return `ServiceAccount "${s.name}/${s.namespace || bindingNamespace}"`;
  return `${s.kind} "${s.name}"`;
}

function clusterRoleRules(role: RoleObject, rbac: RbacSnapshot): PolicyRule[] {
  const selectors = role.aggregationRule?.clusterRoleSelectors;
  // Aggregation is computed on read (the real clusterrole-aggregation controller writes it into rules).
  if (!selectors || selectors.length === 0) return role.rules ?? [];
  const matched = rbac.clusterRoles.filter(
    (cr) =>
      cr !== role &&
      selectors.some((sel) =>
        matchesLabels(
          Object.entries(sel.matchLabels ?? {}).map(([key, v]) => ({
            key,
            operator: "=" as const,
            values: [v],
          })),
          cr.metadata.labels,
        ),
      ),
  );
  return [...(role.rules ?? []), ...matched.flatMap((cr) => cr.rules ?? [])];
}

/** GetRoleReferenceRules: the rules a roleRef points at, or the NotFound error text. */
export function roleRefRules(ref: RoleRef, namespace: string, rbac: RbacSnapshot): PolicyRule[] | string {
  if (ref.kind === "ClusterRole") {
    const cr = rbac.clusterRoles.find((r) => r.metadata.name === ref.name);
    return cr ? clusterRoleRules(cr, rbac) : `clusterrole.rbac.authorization.k8s.io "${ref.name}" not found`;
  }
  if (ref.kind === "Role") {
    const r = rbac.roles.find((x) => x.metadata.name === ref.name && x.metadata.namespace === namespace);
    return r ? (r.rules ?? []) : `role.rbac.authorization.k8s.io "${ref.name}" not found`;
  }
  return `unsupported role reference kind: "${ref.kind}"`;
}

interface Grant {
  binding: BindingObject;
  bindingKind: "ClusterRoleBinding" | "RoleBinding";
  subject: Subject;
  rules: PolicyRule[];
}

/** VisitRulesFor: cluster-wide grants, then (for a namespace) that namespace's RoleBindings. */
function grantsFor(
  user: UserInfo,
  namespace: string,
  rbac: RbacSnapshot,
): { grants: Grant[]; errors: string[] } {
  const grants: Grant[] = [];
  const errors: string[] = [];
  const visit = (b: BindingObject, bindingKind: Grant["bindingKind"], bindingNs: string) => {
    const subject = (b.subjects ?? []).find((s) => subjectApplies(user, s, bindingNs));
    if (!subject) return;
    const rules = roleRefRules(b.roleRef, bindingNs, rbac);
    if (typeof rules === "string") errors.push(rules);
    else grants.push({ binding: b, bindingKind, subject, rules });
  };
  for (const b of rbac.clusterRoleBindings) visit(b, "ClusterRoleBinding", "");
  if (namespace !== "") {
    for (const b of rbac.roleBindings)
      if (b.metadata.namespace === namespace) visit(b, "RoleBinding", namespace);
  }
  return { grants, errors };
}

export function rulesFor(
  user: UserInfo,
  namespace: string,
  rbac: RbacSnapshot,
): { rules: PolicyRule[]; errors: string[] } {
  const { grants, errors } = grantsFor(user, namespace, rbac);
  return { rules: grants.flatMap((g) => g.rules), errors };
}

function aggregateErrors(errors: string[]): string {
  return errors.length === 1 ? errors[0]! : `[${errors.join(", ")}]`;
}

export function authorize(user: UserInfo, attrs: Attributes, rbac: RbacSnapshot): AuthorizationResult {
  if (user.groups.includes(SYSTEM_MASTERS)) return { allowed: true, reason: "" };
  const ns = isResourceAttributes(attrs) ? (attrs.namespace ?? "") : "";
  const { grants, errors } = grantsFor(user, ns, rbac);
  for (const g of grants) {
    if (!g.rules.some((r) => ruleAllows(attrs, r))) continue;
    const b = g.binding;
    const bindingNs =
      g.bindingKind === "RoleBinding" ? `${b.metadata.name}/${b.metadata.namespace}` : b.metadata.name;
    const by = `${g.bindingKind} "${bindingNs}" of ${b.roleRef.kind} "${b.roleRef.name}" to ${describeSubject(g.subject, b.metadata.namespace ?? "")}`;
    return { allowed: true, reason: `RBAC: allowed by ${by}` };
  }
  return { allowed: false, reason: errors.length > 0 ? `RBAC: ${aggregateErrors(errors)}` : "" };
}

export function hasVerbOn(
  user: UserInfo,
  verb: "escalate" | "bind",
  attrs: Omit<ResourceAttributes, "verb">,
  rbac: RbacSnapshot,
): boolean {
  return authorize(user, { ...attrs, verb }, rbac).allowed;
}

/** ConfirmNoEscalation: the requester must already hold every rule, scoped to `namespace` for Roles/RoleBindings. */
export function checkEscalation(
  user: UserInfo,
  namespace: string | undefined,
  rules: readonly PolicyRule[],
  rbac: RbacSnapshot,
): { allowed: boolean; missing: PolicyRule[]; errors: string[] } {
  const owner = rulesFor(user, namespace ?? "", rbac);
  const missing = covers(owner.rules, rules);
  return { allowed: missing.length === 0, missing, errors: owner.errors };
}

export function escalationMessage(
  user: UserInfo,
  missing: readonly PolicyRule[],
  errors: readonly string[] = [],
): string {
  const lines = [...new Set(compactRules(missing).map(compactRuleString))].sort();
  let msg = `user "${user.username}" (groups=${goQuoteList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join("\n")}`;
  if (errors.length > 0) msg += `; resolution errors: [${errors.join(" ")}]`;
  return msg;
}

/**
 * Refused: Forbidden with `message`, or, for a binding whose role does not exist, NotFound naming that
 * role (`notFound`) — as the binding storage returns GetRoleReferenceRules' error, which the apiserver
 * answers as `<bindings resource> "<role name>" not found`.
 */
export type RbacWriteResult =
  | { allowed: true }
  | { allowed: false; message: string; notFound?: { resource: string; name: string } };

const RBAC_RESOURCE = {
  Role: "roles",
  ClusterRole: "clusterroles",
  RoleBinding: "rolebindings",
  ClusterRoleBinding: "clusterrolebindings",
} as const;

/** Create/update of a Role or ClusterRole: system:masters, the `escalate` verb, or no escalation. */
export function checkRoleWrite(
  user: UserInfo,
  kind: "Role" | "ClusterRole",
  role: RoleObject,
  rbac: RbacSnapshot,
): RbacWriteResult {
  if (user.groups.includes(SYSTEM_MASTERS)) return { allowed: true };
  const namespace = kind === "Role" ? (role.metadata.namespace ?? "") : "";
  const attrs = { group: RBAC_GROUP, resource: RBAC_RESOURCE[kind], namespace, name: role.metadata.name };
  if (hasVerbOn(user, "escalate", attrs, rbac)) return { allowed: true };
  const rules = kind === "ClusterRole" ? clusterRoleRules(role, rbac) : (role.rules ?? []);
  const res = checkEscalation(user, namespace, rules, rbac);
  if (res.allowed) return { allowed: true };
  const msg = escalationMessage(user, res.missing, res.errors);
  return {
    allowed: false,
    message: `${RBAC_RESOURCE[kind]}.${RBAC_GROUP} "${role.metadata.name}" is forbidden: ${msg}`,
  };
}

/** Create/update of a binding: system:masters, `bind` on the referenced role, or holding all its rules. */
export function checkBindingWrite(
  user: UserInfo,
  kind: "RoleBinding" | "ClusterRoleBinding",
  binding: BindingObject,
  rbac: RbacSnapshot,
): RbacWriteResult {
  if (user.groups.includes(SYSTEM_MASTERS)) return { allowed: true };
  const namespace = kind === "RoleBinding" ? (binding.metadata.namespace ?? "") : "";
  const ref = binding.roleRef;
  const refResource = ref.kind === "Role" ? "roles" : "clusterroles";
  const bindAttrs = { group: RBAC_GROUP, resource: refResource, namespace, name: ref.name };
  if (hasVerbOn(user, "bind", bindAttrs, rbac)) return { allowed: true };
  const qualified = `${RBAC_RESOURCE[kind]}.${RBAC_GROUP} "${binding.metadata.name}" is forbidden`;
  const rules = roleRefRules(ref, namespace, rbac);
  if (typeof rules === "string") {
    const notFound = { resource: RBAC_RESOURCE[kind], name: ref.name };
    return {
      allowed: false,
      message: `${RBAC_RESOURCE[kind]}.${RBAC_GROUP} "${ref.name}" not found`,
      notFound,
    };
  }
  const res = checkEscalation(user, namespace, rules, rbac);
  if (res.allowed) return { allowed: true };
  return { allowed: false, message: `${qualified}: ${escalationMessage(user, res.missing, res.errors)}` };
}

/** The Forbidden message of responsewriters.Forbidden + errors.NewForbidden. */
export function forbiddenMessage(
  user: UserInfo,
  attrs: Attributes,
  kind?: string,
  name?: string,
  reason?: string,
): string {
  const suffix = reason ? `: ${reason}` : "";
  if (!isResourceAttributes(attrs)) {
    return `forbidden: User "${user.username}" cannot ${attrs.verb} path "${attrs.path}"${suffix}`;
  }
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  const scope = attrs.namespace ? `in the namespace "${attrs.namespace}"` : "at the cluster scope";
  const why = `User "${user.username}" cannot ${attrs.verb} resource "${resource}" in API group "${attrs.group}" ${scope}${suffix}`;
  const qualified = kind ?? (attrs.group ? `${attrs.resource}.${attrs.group}` : attrs.resource);
  const n = name ?? attrs.name ?? "";
  return n ? `${qualified} "${n}" is forbidden: ${why}` : `${qualified} is forbidden: ${why}`;
}
