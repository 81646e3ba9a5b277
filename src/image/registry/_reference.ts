/**
 * Push destinations: `<registry>/<repository>[:<tag>]`. Pure. The registry is always named (a
 * push to an implied Docker Hub is too easy to get wrong); `docker.io` is accepted and mapped to
 * its API host.
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

const bad = (value: string, detail: string, remedy: string): AicrError =>
  new AicrError(
    "INVALID_REQUEST",
    `Invalid push destination ${JSON.stringify(maskUserinfo(value))}: ${detail}`,
    {
      remedy,
      context: { field: "destination", value: maskUserinfo(value) },
    },
  );

/** A first path component names a registry when it looks like a host (a dot, a port, localhost). */
const looksLikeHost = (part: string): boolean =>
  part === "localhost" || part.includes(".") || part.includes(":") || part.startsWith("[");

export function parsePushTarget(value: string): PushTarget {
  const slashAt = value.indexOf("/");
  const at = value.indexOf("@");
  if (at >= 0 && (slashAt < 0 || at < slashAt || /^[a-z][a-z0-9+.-]*:\/\//i.test(value))) {
    throw bad(
      value,
      "credentials in a reference are refused (they would reach logs and shell history)",
      "name the registry without user:password@; pass --username <user> --password-stdin, or run docker login <registry> first",
    );
  }
  if (value.includes("@")) {
    throw bad(
      value,
      "a push destination names a tag, not a digest",
      "drop the @sha256:… part; the digest comes from the archive and is printed after the push",
    );
  }
  const slash = value.indexOf("/");
  const first = slash < 0 ? "" : value.slice(0, slash);
  if (slash < 0 || !looksLikeHost(first)) {
    throw bad(value, `expected ${FORM}`, "name the registry host first (docker.io for Docker Hub)");
  }
  if (!HOST.test(first)) throw bad(value, `${JSON.stringify(first)} is not a host[:port]`, `use ${FORM}`);
  let rest = value.slice(slash + 1);
  let tag: string | undefined;
  const colon = rest.lastIndexOf(":");
  if (colon >= 0) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) {
      throw bad(
        value,
        `tag ${JSON.stringify(tag)} is not valid`,
        "a tag is up to 128 letters, digits, '_', '.' or '-', not starting with '.' or '-'",
      );
    }
  }
  const parts = rest.split("/");
  const wrong = parts.find((p) => !COMPONENT.test(p));
  if (wrong !== undefined) {
    throw bad(
      value,
      `repository path component ${JSON.stringify(wrong)} is not valid`,
      "use lowercase letters, digits and single separators ('.', '_', '__', '-') between path components",
    );
  }
  if (first.length + 1 + rest.length > 255)
    throw bad(value, "the name is longer than 255 characters", `use ${FORM}`);
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
