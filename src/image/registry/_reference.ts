/**
 * Push destinations `<registry>/<repository>[:<tag>]` and the images `aicr image verify` reads
 * (`…[:<tag>]` or `…@sha256:<hex>`). Pure. The registry is always named (a push to an implied
 * Docker Hub is too easy to get wrong); `docker.io` is accepted and mapped to its API host.
 */
import { AicrError } from "../../core/errors.ts";
import { maskUserinfo } from "../../core/url.ts";

export interface PushTarget {
  /** The registry as the operator wrote it (used in the printed reference and credential look-up). */
  registry: string;
  /** Where the API lives (`docker.io` → `registry-1.docker.io`). */
  apiHost: string;
  repository: string;
  tag?: string;
}

const HOST =
  /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:.]+\])(?::[0-9]{1,5})?$/;
const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
export const TAG = /^[\w][\w.-]{0,127}$/;
const FORM = "<registry>/<repository>[:<tag>], e.g. registry.example.com:5000/team/aicr:v1";
const IMAGE_FORM =
  "<registry>/<repository>[:<tag>] or <registry>/<repository>@sha256:<hex>, e.g. registry.example.com:5000/team/aicr:v1";
const DIGEST = /^sha256:[a-f0-9]{64}$/;

/** An image as `aicr image verify` names it: by tag or by digest (or neither: the caller decides). */
export interface ImageReference extends PushTarget {
  digest?: string;
}

/** What is being parsed, for messages: the noun, the flag or argument, the form it takes. */
interface Kind {
  noun: string;
  field: string;
  form: string;
}

const PUSH: Kind = { noun: "push destination", field: "destination", form: FORM };
const IMAGE: Kind = { noun: "image reference", field: "image", form: IMAGE_FORM };

const bad = (kind: Kind, value: string, detail: string, remedy: string): AicrError =>
  new AicrError("INVALID_REQUEST", `Invalid ${kind.noun} ${JSON.stringify(maskUserinfo(value))}: ${detail}`, {
    remedy,
    context: { field: kind.field, value: maskUserinfo(value) },
  });

/** A first path component names a registry when it looks like a host (a dot, a port, localhost). */
const looksLikeHost = (part: string): boolean =>
  part === "localhost" || part.includes(".") || part.includes(":") || part.startsWith("[");

/** user:password@ before the first slash, or a URL scheme, is refused before anything else. */
function refuseUserinfo(kind: Kind, value: string): void {
  const slashAt = value.indexOf("/");
  const at = value.indexOf("@");
  if (at >= 0 && (slashAt < 0 || at < slashAt || /^[a-z][a-z0-9+.-]*:\/\//i.test(value))) {
    throw bad(
      kind,
      value,
      "credentials in a reference are refused (they would reach logs and shell history)",
      "name the registry without user:password@; pass --username <user> --password-stdin, or run docker login <registry> first",
    );
  }
}

export function parsePushTarget(value: string): PushTarget {
  refuseUserinfo(PUSH, value);
  if (value.includes("@")) {
    throw bad(
      PUSH,
      value,
      "a push destination names a tag, not a digest",
      "drop the @sha256:… part; the digest comes from the archive and is printed after the push",
    );
  }
  return parseName(PUSH, value, value);
}

/** `<registry>/<repository>[:<tag>]` or `<registry>/<repository>@sha256:<hex>` (a tag and a digest together are refused). */
export function parseImageReference(value: string): ImageReference {
  refuseUserinfo(IMAGE, value);
  const at = value.indexOf("@");
  if (at < 0) return parseName(IMAGE, value, value);
  const digest = value.slice(at + 1);
  if (!DIGEST.test(digest)) {
    throw bad(
      IMAGE,
      value,
      `${JSON.stringify(digest)} is not a sha256 digest`,
      "write the digest as sha256: and 64 lowercase hex digits, as aicr image push prints it",
    );
  }
  const name = parseName(IMAGE, value, value.slice(0, at));
  if (name.tag !== undefined) {
    throw bad(
      IMAGE,
      value,
      "it names both a tag and a digest",
      "drop the :<tag> part; the digest alone names the image",
    );
  }
  return { ...name, digest };
}

/** The name part, `value` being the whole reference (for messages). */
function parseName(kind: Kind, whole: string, value: string): PushTarget {
  const { form } = kind;
  const slash = value.indexOf("/");
  const first = slash < 0 ? "" : value.slice(0, slash);
  if (slash < 0 || !looksLikeHost(first)) {
    throw bad(kind, whole, `expected ${form}`, "name the registry host first (docker.io for Docker Hub)");
  }
  if (!HOST.test(first))
    throw bad(kind, whole, `${JSON.stringify(first)} is not a host[:port]`, `use ${form}`);
  let rest = value.slice(slash + 1);
  let tag: string | undefined;
  const colon = rest.lastIndexOf(":");
  if (colon >= 0) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) {
      throw bad(
        kind,
        whole,
        `tag ${JSON.stringify(tag)} is not valid`,
        "a tag is up to 128 letters, digits, '_', '.' or '-', not starting with '.' or '-'",
      );
    }
  }
  const parts = rest.split("/");
  const wrong = parts.find((p) => !COMPONENT.test(p));
  if (wrong !== undefined) {
    throw bad(
      kind,
      whole,
      `repository path component ${JSON.stringify(wrong)} is not valid`,
      "use lowercase letters, digits and single separators ('.', '_', '__', '-') between path components",
    );
  }
  if (first.length + 1 + rest.length > 255)
    throw bad(kind, whole, "the name is longer than 255 characters", `use ${form}`);
  const registry = first;
  const apiHost =
    registry === "docker.io" || registry === "index.docker.io" ? "registry-1.docker.io" : registry;
  const repository = apiHost === "registry-1.docker.io" && parts.length === 1 ? `library/${rest}` : rest;
  return { registry, apiHost, repository, ...(tag !== undefined ? { tag } : {}) };
}

/** `--mount-from`: a repository on the same registry, with or without the registry prefix. */
export function parseMountFrom(value: string, target: PushTarget): string {
  const prefix = `${target.registry}/`;
  const repo = value.startsWith(prefix) ? value.slice(prefix.length) : value;
  if (!repo.split("/").every((p) => COMPONENT.test(p)) || repo.includes(":") || repo.includes("@")) {
    throw new AicrError(
      "INVALID_REQUEST",
      `Invalid --mount-from ${JSON.stringify(value)}: expected a repository`,
      {
        remedy: `name a repository on ${target.registry} without a tag, e.g. team/aicr-base`,
        context: { field: "--mount-from", value },
      },
    );
  }
  return repo;
}

/** True for a registry on this machine: credentials may go there over plain HTTP. */
export function isLoopback(host: string): boolean {
  const name = host.startsWith("[") ? host.slice(1, host.indexOf("]")) : host.replace(/:\d+$/, "");
  return name === "localhost" || name === "::1" || /^127\.\d+\.\d+\.\d+$/.test(name);
}
