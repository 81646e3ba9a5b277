/** Writes kubeconfig files pointing at a fake cluster. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";

export interface KubeconfigUser {
  token?: string;
  cert?: { cert: string; key: string };
}

const b64 = (s: string) => Buffer.from(s).toString("base64");

export function writeKubeconfig(
  dir: string,
  fileName: string,
  ...args: Parameters<typeof kubeconfigText>
): string {
  const path = join(dir, fileName);
  writeFileSync(path, kubeconfigText(...args), { mode: 0o600 });
  return path;
}

export function kubeconfigText(
  server: string,
  caCert: string | undefined,
  userName: string,
  user: KubeconfigUser,
  namespace = "default",
): string {
  // client-node 1.x refuses http:// unless insecure-skip-tls-verify is set.
  const cluster = caCert
    ? { server, "certificate-authority-data": b64(caCert) }
    : { server, "insecure-skip-tls-verify": true };
  const creds: Record<string, string> = {};
  if (user.token) creds.token = user.token;
  if (user.cert) {
    creds["client-certificate-data"] = b64(user.cert.cert);
    creds["client-key-data"] = b64(user.cert.key);
  }
  const doc = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "aicr-fake", cluster }],
    users: [{ name: userName, user: creds }],
    contexts: [{ name: "aicr-fake", context: { cluster: "aicr-fake", user: userName, namespace } }],
    "current-context": "aicr-fake",
    preferences: {},
  };
  return stringify(doc);
}
