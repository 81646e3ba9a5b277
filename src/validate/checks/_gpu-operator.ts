/** The GPU Operator's names the conformance checks read (as the operator installs them). */

export const GPU_OPERATOR_NS = "gpu-operator";
/** The operator's own Deployment: found by this label, else by its name. */
export const OPERATOR_LABEL = "app.kubernetes.io/name=gpu-operator";
export const OPERATOR_DEPLOYMENT = "gpu-operator";
export const CLUSTER_POLICY = "cluster-policy";
/** The DCGM exporter: its DaemonSet and its Service (same name), and the port it serves /metrics on. */
export const DCGM_EXPORTER = "nvidia-dcgm-exporter";
export const DCGM_PORT = 9400;
