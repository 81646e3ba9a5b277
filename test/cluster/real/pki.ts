/**
 * The files `control-plane up` reads (test/control-plane/README.md): the process's test CA (shared with
 * the fake, so one kubeconfig CA fits both), serving and client certificates, the ServiceAccount
 * signing key, the front-proxy CA of the fault proxy, the static token file and the audit policy.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { clientCert, pki, signedBy } from "../certs.ts";
import { kubeconfigText } from "../kubeconfig.ts";

export interface StaticUser {
  name: string;
  groups: string[];
  token: string;
}

/** Audit every request once, when its answer is complete (watches: when they start), metadata only. */
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Metadata
`;

export interface ControlPlaneFiles {
  dir: string;
  caCert: string;
  frontProxy: { cert: string; key: string; ca: string };
}

export function layOut(dir: string, url: string, users: StaticUser[]): ControlPlaneFiles {
  const p = pki();
  const w = (name: string, text: string) => writeFileSync(join(dir, name), text, { mode: 0o600 });
  w("ca.crt", p.caCert);
  w("server.crt", p.serverCert);
  w("server.key", p.serverKey);
  const admin = clientCert("admin", ["system:masters"]);
  w("admin.crt", admin.cert);
  w("admin.key", admin.key);
  const kubeletClient = clientCert("kube-apiserver-kubelet-client", ["system:masters"]);
  w("kubelet-client.crt", kubeletClient.cert);
  w("kubelet-client.key", kubeletClient.key);
  const sa = signedBy.serviceAccountKey();
  w("sa.key", sa.key);
  w("sa.pub", sa.pub);
  const front = signedBy.frontProxy();
  w("front-proxy-ca.crt", front.ca);
  for (const [file, user] of [
    ["controller-manager.kubeconfig", "system:kube-controller-manager"],
    ["scheduler.kubeconfig", "system:kube-scheduler"],
  ] as const) {
    w(file, kubeconfigText(url, p.caCert, user, { cert: clientCert(user, []) }));
  }
  w(
    "tokens.csv",
    `${users.map((u) => `${u.token},${u.name},${u.name},"${u.groups.join(",")}"`).join("\n")}\n`,
  );
  w("audit-policy.yaml", AUDIT_POLICY);
  return { dir, caCert: p.caCert, frontProxy: front };
}
