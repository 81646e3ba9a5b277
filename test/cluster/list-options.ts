/**
 * ListOptions validation as the apiserver's ValidateListOptions (k8s.io/apimachinery internalversion):
 * resourceVersionMatch and sendInitialEvents, for lists and watches. A failure is 422 Invalid on
 * ListOptions.meta.k8s.io.
 */
import { ApiStatusError, type StatusCause } from "./errors.ts";

const NOT_OLDER_THAN = "NotOlderThan";
const EXACT = "Exact";

const forbidden = (field: string, detail: string): StatusCause => ({
  reason: "FieldValueForbidden",
  message: `Forbidden: ${detail}`,
  field,
});

const notSupported = (field: string, value: string, supported: string[]): StatusCause => ({
  reason: "FieldValueNotSupported",
  message: `Unsupported value: "${value}": supported values: ${supported.map((s) => `"${s}"`).join(", ")}`,
  field,
});

export function validateListOptions(q: URLSearchParams, watch: boolean): void {
  const causes: StatusCause[] = [];
  const match = q.get("resourceVersionMatch") ?? "";
  const rv = q.get("resourceVersion") ?? "";
  const cont = q.get("continue") ?? "";
  const sendInitialEvents = q.has("sendInitialEvents");
  if (watch) {
    if (sendInitialEvents && match !== NOT_OLDER_THAN)
      causes.push(
        forbidden(
          "resourceVersionMatch",
          `sendInitialEvents requires setting resourceVersionMatch to ${NOT_OLDER_THAN}`,
        ),
      );
    if (match) {
      if (!sendInitialEvents)
        causes.push(
          forbidden(
            "resourceVersionMatch",
            "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
          ),
        );
      if (match !== NOT_OLDER_THAN)
        causes.push(notSupported("resourceVersionMatch", match, [NOT_OLDER_THAN]));
      if (cont)
        causes.push(
          forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"),
        );
    }
  } else {
    if (match) {
      if (!rv)
        causes.push(
          forbidden(
            "resourceVersionMatch",
            "resourceVersionMatch is forbidden unless resourceVersion is provided",
          ),
        );
      if (cont)
        causes.push(
          forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"),
        );
      if (match !== EXACT && match !== NOT_OLDER_THAN)
        causes.push(notSupported("resourceVersionMatch", match, [EXACT, NOT_OLDER_THAN, ""]));
      if (match === EXACT && rv === "0")
        causes.push(
          forbidden(
            "resourceVersionMatch",
            'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
          ),
        );
    }
    if (sendInitialEvents)
      causes.push(forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"));
  }
  if (causes.length === 0) return;
  const summary = causes.map((c) => `${c.field}: ${c.message}`).join(", ");
  throw new ApiStatusError(
    422,
    "Invalid",
    `ListOptions.meta.k8s.io "" is invalid: ${causes.length > 1 ? `[${summary}]` : summary}`,
    { group: "meta.k8s.io", kind: "ListOptions", causes },
  );
}

const parseUintError = (rv: string) =>
  `resourceVersion: Invalid value: "${rv}": strconv.ParseUint: parsing "${rv}": invalid syntax`;

/**
 * A resourceVersion that is no unsigned integer: a list answers 400 BadRequest; a watch fails before
 * its stream starts with a 500 whose Status has no reason (as kube-apiserver 1.36 does).
 */
export function checkResourceVersion(q: URLSearchParams, watch: boolean): void {
  const rv = q.get("resourceVersion");
  if (!rv || /^\d+$/.test(rv)) return;
  if (!watch) throw new ApiStatusError(400, "BadRequest", `invalid resource version: ${parseUintError(rv)}`);
  const e = new ApiStatusError(500, "", parseUintError(rv));
  delete (e.status as { reason?: string }).reason;
  throw e;
}
