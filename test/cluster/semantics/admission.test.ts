import { describe, expect, test } from "bun:test";
import {
  enforcedLevel,
  podSecurityBaselineViolations,
  podSecurityForbiddenMessage,
  podSecurityRestrictedViolations,
} from "./admission.ts";

const compliant = {
  securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
  containers: [
    {
      name: "aicr",
      image: "aicr",
      securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
    },
  ],
};

const withContainer = (sc: object, extra: object = {}) => ({
  ...compliant,
  ...extra,
  containers: [
    { name: "aicr", image: "aicr", securityContext: { ...compliant.containers[0]!.securityContext, ...sc } },
  ],
});

describe("restricted", () => {
  test.each([
    ["compliant pod", compliant, []],
    [
      "host namespaces",
      { ...compliant, hostNetwork: true, hostPID: true, hostIPC: true },
      ["host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)"],
    ],
    [
      "privileged",
      withContainer({ privileged: true }),
      ['privileged (container "aicr" must not set securityContext.privileged=true)'],
    ],
    [
      "hostPath volume is a restricted volume type",
      {
        ...compliant,
        volumes: [
          { name: "root", hostPath: { path: "/" } },
          { name: "cfg", configMap: { name: "c" } },
        ],
      },
      ['restricted volume types (volume "root" uses restricted volume type "hostPath")'],
    ],
    [
      "capabilities not dropped",
      withContainer({ capabilities: {} }),
      ['unrestricted capabilities (container "aicr" must set securityContext.capabilities.drop=["ALL"])'],
    ],
    [
      "NET_BIND_SERVICE may be added",
      withContainer({ capabilities: { drop: ["ALL"], add: ["NET_BIND_SERVICE"] } }),
      [],
    ],
    [
      "SYS_ADMIN may not",
      withContainer({ capabilities: { drop: ["ALL"], add: ["SYS_ADMIN", "NET_BIND_SERVICE"] } }),
      [
        'unrestricted capabilities (container "aicr" must not include "SYS_ADMIN" in securityContext.capabilities.add)',
      ],
    ],
    [
      "allowPrivilegeEscalation unset",
      withContainer({ allowPrivilegeEscalation: undefined }),
      [
        'allowPrivilegeEscalation != false (container "aicr" must set securityContext.allowPrivilegeEscalation=false)',
      ],
    ],
    [
      "runAsNonRoot false on container",
      withContainer({ runAsNonRoot: false }),
      ['runAsNonRoot != true (container "aicr" must not set securityContext.runAsNonRoot=false)'],
    ],
    [
      "runAsNonRoot on container only is enough",
      {
        ...withContainer({ runAsNonRoot: true, seccompProfile: { type: "Localhost" } }),
        securityContext: {},
      },
      [],
    ],
    [
      "runAsUser 0 on pod",
      { ...compliant, securityContext: { ...compliant.securityContext, runAsUser: 0 } },
      ["runAsUser=0 (pod must not set runAsUser=0)"],
    ],
    [
      "seccomp Unconfined on pod",
      { ...compliant, securityContext: { runAsNonRoot: true, seccompProfile: { type: "Unconfined" } } },
      ['seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")'],
    ],
  ] as [string, object, string[]][])("%s", (_n, spec, want) => {
    expect(podSecurityRestrictedViolations(spec)).toEqual(want);
  });

  test("a bare pod violates everything, in the registry's order, with plural containers", () => {
    const spec = {
      hostNetwork: true,
      initContainers: [{ name: "init" }],
      containers: [{ name: "a", securityContext: { privileged: true } }, { name: "b" }],
    };
    expect(podSecurityRestrictedViolations(spec)).toEqual([
      "host namespaces (hostNetwork=true)",
      'privileged (container "a" must not set securityContext.privileged=true)',
      'allowPrivilegeEscalation != false (containers "init", "a", "b" must set securityContext.allowPrivilegeEscalation=false)',
      'unrestricted capabilities (containers "init", "a", "b" must set securityContext.capabilities.drop=["ALL"])',
      'runAsNonRoot != true (pod or containers "init", "a", "b" must set securityContext.runAsNonRoot=true)',
      'seccompProfile (pod or containers "init", "a", "b" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    ]);
  });

  test("forbidden message shape", () => {
    const v = podSecurityRestrictedViolations({ ...compliant, hostPID: true });
    expect(podSecurityForbiddenMessage("aicr-abcde", v)).toBe(
      'pods "aicr-abcde" is forbidden: violates PodSecurity "restricted:latest": host namespaces (hostPID=true)',
    );
  });
});

describe("baseline", () => {
  test("a plain pod passes, hostPath and SYS_ADMIN do not", () => {
    expect(podSecurityBaselineViolations({ containers: [{ name: "c" }] })).toEqual([]);
    expect(
      podSecurityBaselineViolations({
        volumes: [{ name: "h", hostPath: { path: "/" } }],
        containers: [{ name: "c", securityContext: { capabilities: { add: ["SYS_ADMIN", "CHOWN"] } } }],
      }),
    ).toEqual([
      'non-default capabilities (container "c" must not include "SYS_ADMIN" in securityContext.capabilities.add)',
      'hostPath volumes (volume "h")',
    ]);
  });

  test("enforcedLevel reads the namespace label", () => {
    expect(enforcedLevel({ "pod-security.kubernetes.io/enforce": "restricted" })).toBe("restricted");
    expect(enforcedLevel({ "pod-security.kubernetes.io/enforce": "bogus" })).toBeUndefined();
    expect(enforcedLevel(undefined)).toBeUndefined();
  });
});
