import { AicrError } from "../core/errors.ts";
import { dns1123LabelProblems, dns1123SubdomainProblems } from "../core/names.ts";

export interface ConfigMapRef {
  namespace: string;
  name: string;
}

export const CONFIGMAP_URI_SCHEME = "cm://";
const EXPECTED_FORM = "cm://<namespace>/<name>";

/** True when the value names a ConfigMap destination rather than a file (scheme match only). */
export function isConfigMapUri(value: string): boolean {
  return value.startsWith(CONFIGMAP_URI_SCHEME);
}

function reject(uri: string, detail: string): AicrError {
  return new AicrError(
    "INVALID_REQUEST",
    `ConfigMap URI "${uri}" is invalid: ${detail}; expected ${EXPECTED_FORM}`,
    {
      remedy: `Write the destination as ${EXPECTED_FORM}, for example cm://gpu-operator/aicr-snapshot.`,
      context: { uri },
    },
  );
}

function namespaceProblem(namespace: string): string | undefined {
  if (namespace.length > 63) return `namespace "${namespace}" is longer than 63 characters`;
  if (dns1123LabelProblems(namespace).length > 0) {
    return `namespace "${namespace}" is not a DNS-1123 label (lower-case letters, digits and '-', starting and ending with a letter or digit)`;
  }
  return undefined;
}

function nameProblem(name: string): string | undefined {
  if (name.length > 253) return `name "${name}" is longer than 253 characters`;
  if (dns1123SubdomainProblems(name).length > 0) {
    return `name "${name}" is not a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', each part starting and ending with a letter or digit)`;
  }
  return undefined;
}

/** Parses exactly `cm://<namespace>/<name>`; anything else is INVALID_REQUEST naming the value. */
export function parseConfigMapUri(uri: string): ConfigMapRef {
  if (!isConfigMapUri(uri)) throw reject(uri, `it does not start with "${CONFIGMAP_URI_SCHEME}"`);
  const rest = uri.slice(CONFIGMAP_URI_SCHEME.length);
  const parts = rest.split("/");
  if (parts.length !== 2) {
    const slashes = parts.length - 1;
    throw reject(uri, `it has ${slashes} '/' after the scheme; exactly one separates namespace and name`);
  }
  const [namespace = "", name = ""] = parts;
  if (namespace === "") throw reject(uri, "the namespace is empty");
  if (name === "") throw reject(uri, "the name is empty");
  const problem = namespaceProblem(namespace) ?? nameProblem(name);
  if (problem) throw reject(uri, problem);
  return { namespace, name };
}
