/** Kubernetes object-name rules (apimachinery validation), returned as problem lists: empty means valid. */

const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export const MAX_LABEL_LENGTH = 63;
export const MAX_SUBDOMAIN_LENGTH = 253;

export function dns1123LabelProblems(value: string): string[] {
  const problems: string[] = [];
  if (value.length > MAX_LABEL_LENGTH) problems.push(`must be no more than ${MAX_LABEL_LENGTH} characters`);
  if (!LABEL.test(value)) {
    problems.push(
      "must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
    );
  }
  return problems;
}

export function dns1123SubdomainProblems(value: string): string[] {
  const problems: string[] = [];
  if (value.length > MAX_SUBDOMAIN_LENGTH)
    problems.push(`must be no more than ${MAX_SUBDOMAIN_LENGTH} characters`);
  if (!SUBDOMAIN.test(value)) {
    problems.push(
      "must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
    );
  }
  return problems;
}
