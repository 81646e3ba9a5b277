/** Ordering and pagination of list results (limit / continue), by etcd key byte order. */
import { decodeContinue, encodeContinue } from "./continue-token.ts";
import { expired } from "./errors.ts";
import { clone, type KObject, keyOf } from "./objects.ts";
import type { ListOptions, ListResult } from "./store-types.ts";

const keyOfObject = (o: KObject) => keyOf(o.metadata.namespace, o.metadata.name!);

export function paginate(
  matching: KObject[],
  opts: ListOptions,
  currentRv: number,
  oldestRv: number,
): ListResult {
  let items = [...matching].sort((a, b) => {
    const ka = keyOfObject(a);
    const kb = keyOfObject(b);
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
  let listRv = currentRv;
  // Simplification: later pages read current data, not a snapshot at the first page's resourceVersion;
  // the list resourceVersion parameter is ignored.
  if (opts.continue) {
    const token = decodeContinue(opts.continue);
    if (token.rv < oldestRv) {
      throw expired(
        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
      );
    }
    listRv = token.rv;
    items = items.filter((o) => keyOfObject(o) > token.start);
  }
  const result: ListResult = { items: [], resourceVersion: String(listRv) };
  if (opts.limit && opts.limit > 0 && items.length > opts.limit) {
    const page = items.slice(0, opts.limit);
    result.continue = encodeContinue(listRv, keyOfObject(page[page.length - 1]!));
    if (!opts.labelSelector && !opts.fieldSelector) result.remainingItemCount = items.length - opts.limit;
    items = page;
  }
  result.items = items.map((o) => clone(o));
  return result;
}
