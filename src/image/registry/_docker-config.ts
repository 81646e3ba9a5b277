/**
 * What `docker login` left behind for one registry: `$DOCKER_CONFIG/config.json` (default
 * `~/.docker/config.json`) — an inline `auths` entry, or the name of a credential helper to ask.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { AicrError } from "../../core/errors.ts";
import { homeDir } from "../../core/home.ts";
import { INPUT_LIMITS, jsonErrorAt, readInputText } from "../../core/input-file.ts";

interface AuthEntry {
  auth?: string;
  username?: string;
  password?: string;
  identitytoken?: string;
}

interface DockerConfig {
  auths?: Record<string, AuthEntry>;
  credHelpers?: Record<string, string>;
  credsStore?: string;
}

export type ConfigCredential =
  | { kind: "basic"; username: string; password: string; source: string }
  | { kind: "identity-token"; username: string; token: string; source: string }
  | { kind: "helper"; helper: string; explicit: boolean; source: string };

/** The key Docker stores Docker Hub under; everything else is keyed by host[:port]. */
const HUB_KEY = "https://index.docker.io/v1/";

/** `https://host/v1/`, `http://host`, `host` → `host` (docker login has written all three). */
const normalize = (key: string): string =>
  key
    .replace(/^[a-z]+:\/\//i, "")
    .split("/")[0]!
    .toLowerCase();

/** The server name a credential helper is asked about. */
export const helperServer = (registry: string): string =>
  registry === "docker.io" || registry === "index.docker.io" ? HUB_KEY : registry;

/** $DOCKER_CONFIG/config.json, else ~/.docker/config.json; undefined when there is no home at all. */
export function configPath(env: Readonly<Record<string, string | undefined>>): string | undefined {
  if (env.DOCKER_CONFIG) return join(env.DOCKER_CONFIG, "config.json");
  const home = homeDir(env);
  return home === undefined ? undefined : join(home, ".docker", "config.json");
}

async function load(path: string): Promise<DockerConfig | undefined> {
  if (!existsSync(path)) return undefined;
  const text = readInputText(path, {
    flag: "Docker config",
    what: "a Docker config.json",
    maxBytes: INPUT_LIMITS.dockerConfig,
    remedy: "fix the file (docker login rewrites it), or pass --username and --password-stdin",
  });
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed && typeof parsed === "object" ? (parsed as DockerConfig) : {};
  } catch {
    // no cause: a parse error quotes the offending token, which may be part of a stored secret
    throw new AicrError(
      "INVALID_REQUEST",
      `The Docker config ${JSON.stringify(path)} is not valid JSON ${jsonErrorAt(text)}`,
      {
        remedy: "fix or remove the file (docker login rewrites it), or pass --username and --password-stdin",
      },
    );
  }
}

function decodeAuth(entry: AuthEntry, path: string, key: string): { username: string; password: string } {
  if (entry.auth) {
    const text = Buffer.from(entry.auth, "base64").toString("utf8");
    const colon = text.indexOf(":");
    if (colon < 0) {
      throw new AicrError(
        "INVALID_REQUEST",
        `The "auth" of ${JSON.stringify(key)} in ${JSON.stringify(path)} is not base64 of user:password`,
        {
          remedy: `run "docker login ${key}" again, or pass --username and --password-stdin`,
        },
      );
    }
    return { username: text.slice(0, colon), password: text.slice(colon + 1) };
  }
  return { username: entry.username ?? "", password: entry.password ?? "" };
}

/** Docker's order: a per-registry helper, then the global store, then an inline entry. */
export async function configCredential(
  registry: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<ConfigCredential[]> {
  const path = configPath(env);
  if (path === undefined) return [];
  const config = await load(path);
  if (!config) return [];
  const wanted = normalize(helperServer(registry));
  const source = path;
  const out: ConfigCredential[] = [];
  const helper = Object.entries(config.credHelpers ?? {}).find(([k]) => normalize(k) === wanted)?.[1];
  if (helper) out.push({ kind: "helper", helper, explicit: true, source });
  else if (config.credsStore)
    out.push({ kind: "helper", helper: config.credsStore, explicit: false, source });
  const hit = Object.entries(config.auths ?? {}).find(([k]) => normalize(k) === wanted);
  if (hit) {
    const [key, entry] = hit;
    const { username, password } = decodeAuth(entry, path, key);
    if (entry.identitytoken)
      out.push({ kind: "identity-token", username, token: entry.identitytoken, source });
    else if (username || password) out.push({ kind: "basic", username, password, source });
  }
  return out;
}
