/**
 * Just enough of the Kubernetes protobuf encoding to read the access reviews `kubectl auth can-i`
 * sends (kubectl's typed clients always send protobuf). Every other protobuf body gets 415.
 */

type Fields = Map<number, (Uint8Array | number)[]>;

function varint(buf: Uint8Array, pos: number): [number, number] {
  let result = 0;
  let shift = 0;
  for (;;) {
    const b = buf[pos++]!;
    result += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) return [result, pos];
    shift += 7;
  }
}

function fields(buf: Uint8Array): Fields {
  const out: Fields = new Map();
  let pos = 0;
  while (pos < buf.length) {
    const [key, p] = varint(buf, pos);
    pos = p;
    const field = Math.floor(key / 8);
    const wire = key & 7;
    let value: Uint8Array | number;
    if (wire === 0) [value, pos] = varint(buf, pos);
    else if (wire === 2) {
      const [len, p2] = varint(buf, pos);
      value = buf.subarray(p2, p2 + len);
      pos = p2 + len;
    } else if (wire === 1 || wire === 5) {
      value = 0;
      pos += wire === 1 ? 8 : 4;
    } else throw new Error(`unsupported protobuf wire type ${wire}`);
    out.set(field, [...(out.get(field) ?? []), value]);
  }
  return out;
}

const text = (f: Fields, n: number): string | undefined => {
  const v = f.get(n)?.[0];
  return v instanceof Uint8Array ? new TextDecoder().decode(v) : undefined;
};
const texts = (f: Fields, n: number): string[] =>
  (f.get(n) ?? [])
    .filter((v): v is Uint8Array => v instanceof Uint8Array)
    .map((v) => new TextDecoder().decode(v));
const message = (f: Fields, n: number): Fields | undefined => {
  const v = f.get(n)?.[0];
  return v instanceof Uint8Array ? fields(v) : undefined;
};

function compact(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(o).filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0)),
  );
}

function resourceAttributes(f: Fields) {
  return compact({
    namespace: text(f, 1),
    verb: text(f, 2),
    group: text(f, 3),
    version: text(f, 4),
    resource: text(f, 5),
    subresource: text(f, 6),
    name: text(f, 7),
  });
}

const MAGIC = [0x6b, 0x38, 0x73, 0x00];

/** Decodes a SelfSubjectAccessReview or SubjectAccessReview from the `k8s\0` protobuf envelope. */
export function decodeAccessReview(body: Uint8Array): Record<string, unknown> {
  if (!MAGIC.every((b, i) => body[i] === b)) throw new Error("missing the k8s protobuf prefix");
  const unknown = fields(body.subarray(4));
  const typeMeta = message(unknown, 1);
  const raw = message(unknown, 2) ?? new Map();
  const specF = message(raw, 2) ?? new Map();
  const ra = message(specF, 1);
  const na = message(specF, 2);
  const spec: Record<string, unknown> = {};
  if (ra) spec.resourceAttributes = resourceAttributes(ra);
  if (na) spec.nonResourceAttributes = compact({ path: text(na, 1), verb: text(na, 2) });
  const kind = typeMeta ? text(typeMeta, 2) : undefined;
  if (kind === "SubjectAccessReview")
    Object.assign(spec, compact({ user: text(specF, 3), groups: texts(specF, 4), uid: text(specF, 6) }));
  return { apiVersion: typeMeta ? text(typeMeta, 1) : undefined, kind, metadata: {}, spec };
}
