/** Name and label validation with the exact messages of k8s.io/apimachinery/pkg/util/validation. */

const DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;

const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const QUALIFIED_NAME_RE = new RegExp(`^${QUALIFIED_NAME_FMT}$`);
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);

export const DNS1123_LABEL_MAX = 63;
export const DNS1123_SUBDOMAIN_MAX = 253;
const QUALIFIED_NAME_MAX = 63;
const LABEL_VALUE_MAX = 63;

/** Go's validation.RegexError: message, then examples joined by ",  " (two spaces, as upstream). */
function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  const ex = examples.map((e) => `'${e}'`).join(",  or ");
  return `${msg} (e.g. ${ex}, regex used for validation is '${fmt}')`;
}

/** util/validation.MaxLenError (names). */
export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/** api/validate/content.MaxLenError (label keys and values, since 1.35). */
function contentMaxLenError(length: number): string {
  return `must be no more than ${length} bytes`;
}

export function validateDns1123Label(v: string): string[] {
  const errs: string[] = [];
  if (v.length > DNS1123_LABEL_MAX) errs.push(maxLenError(DNS1123_LABEL_MAX));
  // A valid subdomain that is no label: since the length was checked, it has dots.
  if (!DNS1123_LABEL_RE.test(v) && DNS1123_SUBDOMAIN_RE.test(v)) errs.push("must not contain dots");
  else if (!DNS1123_LABEL_RE.test(v)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        DNS1123_LABEL_FMT,
        "my-name",
        "123-abc",
      ),
    );
  }
  return errs;
}

export function validateDns1123Subdomain(v: string, maxLen: (n: number) => string = maxLenError): string[] {
  const errs: string[] = [];
  if (v.length > DNS1123_SUBDOMAIN_MAX) errs.push(maxLen(DNS1123_SUBDOMAIN_MAX));
  if (!DNS1123_SUBDOMAIN_RE.test(v)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN_FMT,
        "example.com",
      ),
    );
  }
  return errs;
}

const QUALIFIED_NAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** content.IsLabelKey: label and annotation keys, `[prefix/]name`. */
export function validateLabelKey(k: string): string[] {
  const errs: string[] = [];
  const parts = k.split("/");
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push("prefix part must be non-empty");
    else for (const e of validateDns1123Subdomain(prefix, contentMaxLenError)) errs.push(`prefix part ${e}`);
  } else {
    return [
      `${regexError(`a valid label key ${QUALIFIED_NAME_MSG}`, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push("name part must be non-empty");
  else if (name.length > QUALIFIED_NAME_MAX) errs.push(`name part ${contentMaxLenError(QUALIFIED_NAME_MAX)}`);
  if (!QUALIFIED_NAME_RE.test(name)) {
    errs.push(
      regexError(`name part ${QUALIFIED_NAME_MSG}`, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc"),
    );
  }
  return errs;
}

export function validateLabelValue(v: string): string[] {
  const errs: string[] = [];
  if (v.length > LABEL_VALUE_MAX) errs.push(contentMaxLenError(LABEL_VALUE_MAX));
  if (!LABEL_VALUE_RE.test(v)) {
    errs.push(
      regexError(
        `a valid label must be an empty string or ${QUALIFIED_NAME_MSG.replace(/^must /, "")}`,
        LABEL_VALUE_FMT,
        "MyValue",
        "my_value",
        "12345",
      ),
    );
  }
  return errs;
}
