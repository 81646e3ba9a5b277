/** Label keys and values every aicr object uses; the run labels are what selectors and cleanup rely on. */
export const LABEL = {
  name: "app.kubernetes.io/name",
  component: "app.kubernetes.io/component",
  managedBy: "app.kubernetes.io/managed-by",
  version: "app.kubernetes.io/version",
  runId: "aicr.run/run-id",
  invocationId: "aicr.run/invocation-id",
} as const;

export const LABEL_VALUE = {
  app: "aicr",
  snapshotAgent: "snapshot-agent",
  agentRbac: "agent-rbac",
} as const;
