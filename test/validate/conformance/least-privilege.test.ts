/**
 * Least privilege, proven by the real apiserver's authorizer: each conformance and performance check's
 * identity — the objects a run creates for it, from the same builder — can do exactly what its rules
 * say and nothing another check needs, nothing sensitive (secrets, namespaces, RBAC, pods outside its
 * namespace). Every question is a SubjectAccessReview for the check's ServiceAccount.
 */
import { describe, expect, test } from "bun:test";
import { runLabels } from "../../../src/run/labels.ts";
import { type CheckRule, VALIDATORS } from "../../../src/validate/_catalog.ts";
import {
  buildCheckIdentity,
  buildSupportObjects,
  buildValidatorClusterRole,
  checkJobName,
  VALIDATION_COMPONENT,
  validationNames,
} from "../../../src/validate/jobs/_objects.ts";
import { parseRecipe } from "../../../src/validate/recipe.ts";
import { adminClient } from "../../cluster/standins/_host.ts";
import { useCluster } from "../../support/cluster.ts";

const RUN = "20261202-130000-00000000000000a1";
const NS = "aicr-validation";
const recipe = parseRecipe(
  [
    "kind: RecipeMetadata",
    "spec:",
    "  componentRefs:",
    "    - {name: x, namespace: x, expectedResources: [{kind: Secret, name: x-token, namespace: x}]}",
    "  validation:",
    `    conformance: {checks: [${VALIDATORS.filter((v) => v.phase === "conformance")
      .map((v) => v.name)
      .join(", ")}]}`,
    "    performance: {checks: [nccl-all-reduce-bw]}",
  ].join("\n"),
  "all.yaml",
);
const isolated = VALIDATORS.filter((v) => v.isolated);

interface Probe {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

/** Whether `rules` grant `probe`, as RBAC reads them (no wildcards but a resource `*`). */
function grants(rules: readonly CheckRule[], p: Probe): boolean {
  const resource = p.subresource ? `${p.resource}/${p.subresource}` : p.resource;
  return rules.some(
    (r) =>
      r.apiGroups.includes(p.group) &&
      (r.resources.includes(resource) || r.resources.includes("*")) &&
      r.verbs.includes(p.verb) &&
      (!r.resourceNames?.length || (p.name !== undefined && r.resourceNames.includes(p.name))),
  );
}

const split = (resource: string) => {
  const [res, sub] = resource.split("/");
  return sub ? { resource: res ?? "", subresource: sub } : { resource: res ?? "" };
};

/** Every question the union of all checks' rules raises, in every scope that matters, and the sensitive ones. */
function probes(own: string, other: string): Probe[] {
  const out: Probe[] = [];
  // cluster-wide, the validation namespace, a user's, its own, and another check's
  const scopes = [undefined, NS, "default", own, other];
  const all = isolated.flatMap((e) => [...(e.clusterRules?.(recipe) ?? []), ...(e.namespaceRules ?? [])]);
  for (const r of all)
    for (const group of r.apiGroups)
      for (const res of r.resources)
        for (const verb of r.verbs)
          for (const namespace of scopes) {
            if (res === "*") continue;
            const names = r.resourceNames?.length ? r.resourceNames : [undefined];
            for (const name of names)
              out.push({
                verb,
                group,
                ...split(res),
                ...(namespace ? { namespace } : {}),
                ...(name ? { name } : {}),
              });
          }
  for (const namespace of [undefined, NS, "default"])
    for (const [verb, group, resource] of [
      ["list", "", "secrets"],
      ["get", "", "secrets"],
      ["create", "", "pods"],
      ["create", "", "namespaces"],
      ["delete", "", "namespaces"],
      ["update", "", "nodes"],
      ["create", "rbac.authorization.k8s.io", "clusterrolebindings"],
      ["create", "rbac.authorization.k8s.io", "rolebindings"],
      ["escalate", "rbac.authorization.k8s.io", "clusterroles"],
      ["create", "apps", "deployments"],
      ["delete", "resource.k8s.io", "resourceclaims"],
      ["create", "admissionregistration.k8s.io", "validatingwebhookconfigurations"],
    ] as const)
      out.push({ verb, group, resource, ...(namespace ? { namespace } : {}) });
  const seen = new Set<string>();
  return out.filter((p) => {
    const key = JSON.stringify(p);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

describe("[real] each check's identity can do what its check needs and no more", () => {
  const cluster = useCluster("real");

  test("SubjectAccessReviews for every isolated check against the union of all checks' rules", async () => {
    const client = adminClient(cluster());
    const labels = runLabels({ runId: RUN, invocationId: "inv-lp" }, VALIDATION_COMPONENT);
    const ctx = { names: validationNames(RUN), namespace: NS, labels };
    await client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    const anchor = await client.create(buildValidatorClusterRole(ctx));
    const owner = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      name: ctx.names.rbac,
      uid: anchor.metadata?.uid ?? "",
    };
    for (const o of buildSupportObjects(
      ctx,
      owner,
      { snapshot: "s", recipe: "r" },
      isolated.map((e) => checkJobName(e.name, RUN)),
    ))
      await client.create(o);
    for (const entry of isolated) {
      const { namespace, rest } = buildCheckIdentity(ctx, { entry, runId: RUN, recipe }, owner);
      await client.create(namespace);
      for (const o of rest) await client.create(o);
    }
    const wrong: string[] = [];
    let asked = 0;
    for (const entry of isolated) {
      const own = checkJobName(entry.name, RUN);
      const next = isolated[(isolated.indexOf(entry) + 1) % isolated.length] ?? entry;
      const questions = probes(own, checkJobName(next.name, RUN));
      const user = `system:serviceaccount:${NS}:${own}`;
      const groups = ["system:serviceaccounts", `system:serviceaccounts:${NS}`, "system:authenticated"];
      const clusterRules = entry.clusterRules?.(recipe) ?? [];
      const namespaceRules = entry.namespaceRules ?? [];
      const dataRead = (p: Probe) =>
        p.namespace === NS &&
        p.group === "" &&
        p.resource === "configmaps" &&
        p.verb === "get" &&
        (p.name === ctx.names.snapshotConfigMap || p.name === ctx.names.recipeConfigMap);
      await Promise.all(
        questions.map(async (p) => {
          const expected =
            grants(clusterRules, p) || (p.namespace === own && grants(namespaceRules, p)) || dataRead(p);
          const answer = await client.review(p, { user, groups });
          asked++;
          if (answer.allowed !== expected)
            wrong.push(
              `${entry.name}: ${p.verb} ${p.group}/${p.resource}${p.subresource ? `/${p.subresource}` : ""} in ${p.namespace ?? "(cluster)"}${p.name ? ` name ${p.name}` : ""}: allowed=${answer.allowed}, expected ${expected}`,
            );
        }),
      );
    }
    expect(wrong).toEqual([]);
    expect(asked).toBeGreaterThan(1000);
    // the data ConfigMaps: readable by name, nothing else in the validation namespace
    const dra = `system:serviceaccount:${NS}:${checkJobName("dra-support", RUN)}`;
    const sa = { user: dra, groups: ["system:serviceaccounts", "system:authenticated"] };
    expect(
      (
        await client.review(
          { verb: "get", group: "", resource: "configmaps", namespace: NS, name: ctx.names.recipeConfigMap },
          sa,
        )
      ).allowed,
    ).toBe(true);
    expect(
      (await client.review({ verb: "list", group: "", resource: "configmaps", namespace: NS }, sa)).allowed,
    ).toBe(false);
  }, 120_000);
});
