import { existsSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import type { KubeConfig } from "@kubernetes/client-node";

import { AicrError } from "../core/errors.ts";
import { homeDir } from "../core/home.ts";
import { INPUT_LIMITS, readInputBytes, readInputText, yamlErrorAt } from "../core/input-file.ts";

/**
 * client-node is loaded when a kubeconfig is first read, not at start: `aicr --help`, `version` and
 * the offline commands never evaluate it (about a third of the binary's start-up).
 */
const newKubeConfig = (): KubeConfig => {
  const { KubeConfig: Ctor } = require("@kubernetes/client-node") as typeof import("@kubernetes/client-node");
  return new Ctor();
};

export interface KubeConfigSource {
  /** --kubeconfig; wins over KUBECONFIG. */
  kubeconfig?: string | undefined;
  context?: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  /** Inside the agent pod: with no kubeconfig, use the pod's ServiceAccount. */
  allowInCluster?: boolean;
}

export interface LoadedKubeConfig {
  kc: KubeConfig;
  /** Where the credentials came from, for messages (never the credentials themselves). */
  origin: string;
  server: string;
}

const IN_CLUSTER_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/**
 * True inside a pod (KUBERNETES_SERVICE_HOST and a mounted ServiceAccount token) when no kubeconfig
 * file resolves as kubectl would find it: a command that needs a kubeconfig would fail there, and the
 * caller can say why before the first request.
 */
export function inPodWithoutKubeconfig(source: Omit<KubeConfigSource, "allowInCluster">): boolean {
  if (!source.env.KUBERNETES_SERVICE_HOST || !existsSync(IN_CLUSTER_TOKEN)) return false;
  let path: string | undefined;
  try {
    path = resolveKubeConfigPath({ ...source, allowInCluster: true });
  } catch {
    return true;
  }
  return path === undefined || !existsSync(path);
}

/** The first existing path of a KUBECONFIG list, as kubectl reads it (merging is not supported). */
function fromEnvList(value: string): string | undefined {
  const paths = value.split(":").filter(Boolean);
  return paths.find((p) => existsSync(p)) ?? paths[0];
}

/** Resolves credentials as kubectl does: --kubeconfig, then KUBECONFIG, then ~/.kube/config; in-cluster last. */
export function resolveKubeConfigPath(source: KubeConfigSource): string | undefined {
  if (source.kubeconfig) return source.kubeconfig;
  if (source.env.KUBECONFIG) return fromEnvList(source.env.KUBECONFIG);
  const home = homeDir(source.env);
  const fallback = home === undefined ? undefined : join(home, ".kube", "config");
  if (fallback !== undefined && (existsSync(fallback) || !source.allowInCluster)) return fallback;
  if (source.allowInCluster) return undefined;
  throw new AicrError(
    "INVALID_REQUEST",
    "no kubeconfig: $HOME is not set and this user has no home directory",
    {
      remedy: "pass --kubeconfig <path> or set KUBECONFIG",
    },
  );
}

export function loadKubeConfig(source: KubeConfigSource): LoadedKubeConfig {
  const kc = newKubeConfig();
  const path = resolveKubeConfigPath(source);
  let origin: string;
  if (path !== undefined) {
    loadKubeconfigFile(kc, path);
    origin = `kubeconfig ${path}`;
  } else {
    if (!source.env.KUBERNETES_SERVICE_HOST || !existsSync(IN_CLUSTER_TOKEN)) {
      throw new AicrError("INVALID_REQUEST", "no kubeconfig and no in-cluster ServiceAccount credentials", {
        remedy: "set KUBECONFIG or run inside a pod with a mounted ServiceAccount token",
      });
    }
    kc.loadFromCluster();
    origin = "the pod's ServiceAccount";
  }
  if (source.context) {
    if (!kc.getContextObject(source.context)) {
      throw new AicrError(
        "INVALID_REQUEST",
        `context ${JSON.stringify(source.context)} is not in the ${origin}`,
        {
          remedy: `use one of: ${
            kc
              .getContexts()
              .map((c) => c.name)
              .join(", ") || "(none)"
          }`,
          context: { field: "--context", value: source.context },
        },
      );
    }
    kc.setCurrentContext(source.context);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) {
    throw new AicrError("INVALID_REQUEST", `the ${origin} has no current context with a cluster`, {
      remedy: "pass --context <name> or set current-context in the kubeconfig",
    });
  }
  return { kc, origin, server: cluster.server };
}

/**
 * The namespace of the kubeconfig context this invocation would use (--context, else the current
 * context), as kubectl reads it: offline, from the file alone, before any request. Undefined when
 * there is no kubeconfig file, it cannot be read, or the context names no namespace; a broken file
 * or an unknown --context is the connection's to report (loadKubeConfig), not this.
 */
export function contextNamespace(source: KubeConfigSource): string | undefined {
  let path: string | undefined;
  try {
    path = resolveKubeConfigPath({ ...source, allowInCluster: true });
  } catch {
    return undefined;
  }
  if (path === undefined || !existsSync(path)) return undefined;
  const kc = newKubeConfig();
  try {
    loadKubeconfigFile(kc, path);
  } catch {
    return undefined;
  }
  const name = source.context || kc.getCurrentContext();
  if (!name) return undefined;
  return kc.getContextObject(name)?.namespace || undefined;
}

/** One context of a kubeconfig, as the file names it (offline: nothing is asked of its cluster). */
export interface KubeContextEntry {
  name: string;
  /** The server of the context's cluster; "" when the cluster is not in the file. */
  server: string;
  /** The context's namespace; undefined when it names none. */
  namespace: string | undefined;
}

export interface KubeContextList {
  /** Where the kubeconfig came from, for messages. */
  origin: string;
  /** Every context, in the file's order. */
  contexts: KubeContextEntry[];
  /** The file's current-context; undefined when unset. */
  current: string | undefined;
}

/**
 * Every context of the kubeconfig this invocation resolves (--kubeconfig, KUBECONFIG, ~/.kube/config),
 * in the file's order, read offline. A missing or unreadable file is INVALID_REQUEST, as for
 * loadKubeConfig; the pod's ServiceAccount has no contexts to list.
 */
export function listContexts(source: KubeConfigSource): KubeContextList {
  const path = resolveKubeConfigPath({ ...source, allowInCluster: false });
  const kc = newKubeConfig();
  loadKubeconfigFile(kc, path ?? "");
  const contexts = kc.getContexts().map((c) => ({
    name: c.name,
    server: kc.getCluster(c.cluster)?.server ?? "",
    namespace: c.namespace || undefined,
  }));
  return { origin: `kubeconfig ${path}`, contexts, current: kc.getCurrentContext() || undefined };
}

const KUBECONFIG_REMEDY =
  "check that the file is a valid kubeconfig (kubectl config view --kubeconfig <path>)";

/** The message of client-node's own shape checks ("users[0].name is missing"), which hold no values. */
const SHAPE_MESSAGE = /^(clusters|users|contexts)\[\d+\](\.[a-z.]+)? is missing$/;

/**
 * A kubeconfig file into `kc`, read through the one bounded reader: one that does not exist, is not a
 * regular file, is too large or does not parse is INVALID_REQUEST. A parse error names the line and
 * column only: the parser's own message quotes the text around the error, which may be a token. The
 * certificate and key files it names are read the same way (bounded, once) and carried as data.
 */
function loadKubeconfigFile(kc: KubeConfig, path: string): void {
  if (!path || !existsSync(path))
    throw new AicrError("INVALID_REQUEST", `kubeconfig ${JSON.stringify(path)} does not exist`, {
      remedy: "pass --kubeconfig <path>, set KUBECONFIG, or create ~/.kube/config",
      context: { field: "--kubeconfig", value: path },
    });
  const text = readInputText(path, {
    flag: "kubeconfig",
    what: "a kubeconfig",
    maxBytes: INPUT_LIMITS.kubeconfig,
    remedy: KUBECONFIG_REMEDY,
  });
  // client-node reads a user's token-file while it parses (readFileSync, no bound): each is checked
  // through the bounded reader first, so a FIFO or /dev/zero is refused instead of hanging or growing.
  for (const file of tokenFiles(text))
    readInputBytes(file, {
      flag: "the kubeconfig's token-file",
      what: "a token file",
      maxBytes: INPUT_LIMITS.token,
    });
  try {
    kc.loadFromString(text);
  } catch (err) {
    const message = err instanceof Error ? err.message : "";
    const problem = SHAPE_MESSAGE.test(message)
      ? message
      : (err as { mark?: unknown }).mark !== undefined
        ? `not valid YAML ${yamlErrorAt(err)}`
        : "not a kubeconfig (expected a map with clusters, users and contexts)";
    throw new AicrError("INVALID_REQUEST", `kubeconfig ${JSON.stringify(path)}: ${problem}`, {
      remedy: KUBECONFIG_REMEDY,
      context: { field: "--kubeconfig", value: path },
    });
  }
  kc.makePathsAbsolute(dirname(path));
  inlineReferencedFiles(kc, dirname(path));
}

/**
 * The token-file paths a kubeconfig's users name, as client-node will read them: from Bun's YAML
 * reader when it reads the text, else from the lines that set one (the parse that follows decides
 * whether the file is a kubeconfig at all).
 */
function tokenFiles(text: string): string[] {
  const native = (globalThis as { Bun?: { YAML?: { parse(t: string): unknown } } }).Bun?.YAML;
  try {
    const doc = native?.parse(text) as { users?: { user?: Record<string, unknown> }[] } | undefined;
    if (doc && Array.isArray(doc.users))
      return doc.users.flatMap((u) => {
        const file = u?.user?.["token-file"];
        return typeof file === "string" && file ? [file] : [];
      });
  } catch {
    // fall through to the lines
  }
  return [...text.matchAll(/^\s*["']?token-file["']?\s*:\s*["']?([^"'\n#]+?)["']?\s*$/gm)].map(
    (m) => m[1] as string,
  );
}

/**
 * certificate-authority, client-certificate and client-key files → their data, each through the
 * bounded reader (client-node would read them whole on every request).
 */
function inlineReferencedFiles(kc: KubeConfig, root: string): void {
  const pem = (field: string, file: string): string =>
    Buffer.from(
      readInputBytes(file, {
        flag: `the kubeconfig's ${field}`,
        what: "a PEM file",
        maxBytes: INPUT_LIMITS.pem,
      }),
    ).toString("base64");
  const clusters = kc.clusters.map((c) =>
    c.caFile ? { ...c, caFile: undefined, caData: pem("certificate-authority", c.caFile) } : c,
  );
  const users = kc.users.map((user) => {
    // An exec plugin named by a relative path with a slash is found beside the kubeconfig, as kubectl
    // finds it; a bare name is looked up on PATH.
    const command = user.exec?.command;
    const u =
      typeof command === "string" && command.includes("/") && !isAbsolute(command)
        ? { ...user, exec: { ...user.exec, command: join(root, command) } }
        : user;
    if (!u.certFile && !u.keyFile) return u;
    return {
      ...u,
      certFile: undefined,
      keyFile: undefined,
      ...(u.certFile ? { certData: pem("client-certificate", u.certFile) } : {}),
      ...(u.keyFile ? { keyData: pem("client-key", u.keyFile) } : {}),
    };
  });
  kc.loadFromOptions({ clusters, users, contexts: kc.contexts, currentContext: kc.currentContext });
}
