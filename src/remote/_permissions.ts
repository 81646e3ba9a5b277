/**
 * The snapshot gate (a run and a fleet alike), stated as data for the one runner (kube/gate.ts): the
 * caller's base checks, then by ServiceAccount mode the run's RBAC objects and what its Role and
 * ClusterRole grant (prefix), or the existing ServiceAccount's own rules (exact); the agent pod's
 * admission dry run either way.
 */

import { bulletList } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import { resolveServiceAccountMode, type ServiceAccountMode } from "../deployer/service-account-mode.ts";
import type { KubeClient, KubeObject } from "../kube/client.ts";
import { type GateSpec, type Need, passGate } from "../kube/gate.ts";
import { agentGrants, agentRuleChecks, callerBaseChecks, callerRbacChecks } from "./_checks.ts";

export interface GateInput {
  namespace: string;
  outputNamespace: string;
  ownsOutput: boolean;
  discoverNetwork: boolean;
  /**
   * --service-account-name: looked up (exact if it exists, else a prefix). Unset: prefix mode, known
   * up front with no look-up.
   */
  serviceAccountName?: string | undefined;
  /** The namespace's read (the object, or the error it answered), when the caller already sent it. */
  namespaceRead?: Promise<unknown> | undefined;
  /** The agent pod as the Job would create it, for the admission dry run. */
  dryRunPod: (mode: ServiceAccountMode) => KubeObject;
  /** Once aborted, no further review is sent. */
  signal?: AbortSignal | undefined;
}

export interface GateResult {
  mode: ServiceAccountMode;
  /** Allowed every verb on every resource (cluster-admin): may bind any Role without holding its rules. */
  mayBind: boolean;
}

const RBAC_HINT =
  "each run creates its own ServiceAccount, Role, RoleBinding, ClusterRole and ClusterRoleBinding and always deletes them, so it needs create and delete on all five; running as an existing ServiceAccount (--service-account-name <existing>) needs none of them";
const ESCALATION_HINT =
  'the run\'s Role and ClusterRole may grant only what you hold yourself: ask for the permissions listed, or for "escalate" and "bind" on roles and clusterroles; running as an existing ServiceAccount (--service-account-name <existing>) creates neither';

/** What a mode adds to the base checks: the run's RBAC (prefix) or the ServiceAccount's rules (exact). */
function modeSpec(input: GateInput, mode: ServiceAccountMode): GateSpec {
  const dryRuns = [
    { object: input.dryRunPod(mode), what: "the agent pod", namespaceRead: input.namespaceRead },
  ];
  if (mode.kind === "prefix")
    return {
      access: callerRbacChecks(input.namespace).map((c): Need => ({ ...c, hint: RBAC_HINT })),
      grants: agentGrants(input, ESCALATION_HINT),
      dryRuns,
    };
  const user = `system:serviceaccount:${input.namespace}:${mode.name}`;
  const checks = agentRuleChecks(input);
  const subject = {
    user,
    groups: ["system:serviceaccounts", `system:serviceaccounts:${input.namespace}`, "system:authenticated"],
  };
  return {
    subjects: [
      {
        subject,
        checks,
        who: `agent ServiceAccount "${user}"`,
        hint: `grant the ServiceAccount the agent's rules: aicr render-rbac ${mode.name} --namespace ${input.namespace}, then kubectl apply -f snapshot-rbac-<run-id>/`,
        unverifiable: {
          message:
            "could not verify the agent ServiceAccount's own permissions; continuing, but a missing rule will surface as an in-pod failure minutes from now instead of here",
          fields: {
            serviceAccount: mode.name,
            namespace: input.namespace,
            uncheckedRules: checks.length,
            remedy: `grant the caller 'create subjectaccessreviews.authorization.k8s.io', or verify by hand with: kubectl auth can-i --list --as ${user}`,
          },
        },
      },
    ],
    dryRuns,
  };
}

/**
 * The pre-flight gate: before anything is written, every missing permission (and every predicted
 * escalation or admission refusal) is reported at once. A caller allowed everything (cluster-admin)
 * is settled by one wildcard review.
 */
export async function checkPermissions(
  client: KubeClient,
  input: GateInput,
  log: Logger,
): Promise<GateResult> {
  const base = callerBaseChecks(input);
  // Without --service-account-name the mode is known up front and everything goes out in one wave;
  // with it, the ServiceAccount look-up goes out first, and the checks it decides follow its answer.
  const known: ServiceAccountMode | undefined = input.serviceAccountName
    ? undefined
    : { kind: "prefix", prefix: undefined };
  let spec: GateSpec;
  let mode: Promise<ServiceAccountMode>;
  if (known) {
    const own = modeSpec(input, known);
    spec = { ...own, access: [...base, ...(own.access ?? [])] };
    mode = Promise.resolve(known);
  } else {
    mode = resolveServiceAccountMode(client, { namespace: input.namespace, name: input.serviceAccountName });
    mode.catch(() => {});
    spec = {
      access: base,
      later: {
        needs: [{ verb: "get", group: "", resource: "serviceaccounts", namespace: input.namespace }],
        part: mode.then((m) => modeSpec(input, m)),
        unchecked: `reading ServiceAccounts in namespace "${input.namespace}" is needed to tell whether --service-account-name names an existing ServiceAccount; until it is granted, the permissions that depend on that answer (the existing ServiceAccount's rules, or the run's own RBAC objects) cannot be checked and are not listed`,
      },
    };
  }
  const outcome = await passGate(client, spec, {
    refusal: {
      message: (lines) => `missing required permissions:${bulletList(lines)}`,
      remedy: "ask your cluster administrator for the permissions listed",
      context: (lines) => ({ missing: lines.length }),
    },
    signal: input.signal,
    log,
    nameCaller: true,
    everythingFirst: true,
  });
  return { mode: await mode, mayBind: outcome.holdsEverything };
}
