/**
 * startCluster: one fake Kubernetes apiserver (store + msw handlers on a loopback port), with its
 * controllers. Many can run in one process, each on its own port.
 *
 *   const cluster = await startCluster({ https?: boolean, users?: [{ name, groups }], controllers?: boolean | options })
 *   cluster.url / cluster.port
 *   cluster.kubeconfigFor("admin" | user | "system:serviceaccount:<ns>:<name>", { auth?: "token" | "certificate", namespace? }) → path
 *   cluster.addUser(name, groups) → token;  cluster.tokenFor(user);  cluster.tokenForServiceAccount(ns, name)
 *   cluster.store (store.ts) · cluster.log (request-log.ts) · cluster.faults (faults.ts)
 *   await cluster.stop()
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Authenticator } from "./auth.ts";
import { startBackend } from "./backend.ts";
import { bootstrap } from "./bootstrap.ts";
import { clientCert, pki } from "./certs.ts";
import type { ClusterContext } from "./context.ts";
import { Faults } from "./faults.ts";
import { Front } from "./front.ts";
import { clusterHandlers } from "./handlers.ts";
import { writeKubeconfig } from "./kubeconfig.ts";
import type { KObject } from "./objects.ts";
import { Pipeline } from "./pipeline.ts";
import { RequestLog } from "./request-log.ts";
import { resource } from "./resources.ts";
import { Store } from "./store.ts";
import { type ControllerOptions, startControllers } from "./wiring.ts";

export interface ClusterOptions {
  /** Serve HTTPS with a generated CA; clients may authenticate with client certificates. */
  https?: boolean;
  users?: { name: string; groups?: string[] }[];
  /** Start the Job controller, scheduler, kubelet and garbage collector (default true). */
  controllers?: boolean | ControllerOptions;
  /** Objects created at startup, after the system namespaces (e.g. nodes). */
  objects?: { resource: string; object: KObject }[];
  historyLimit?: number;
  /** Interval of BOOKMARK events to watchers that allow them (default 60 s, as the apiserver). */
  bookmarkIntervalMs?: number;
  now?: () => Date;
}

export interface KubeconfigOptions {
  auth?: "token" | "certificate";
  namespace?: string;
}

export interface Cluster {
  url: string;
  port: number;
  store: Store;
  log: RequestLog;
  faults: Faults;
  caCert: string | undefined;
  kubeconfigFor(user: string, opts?: KubeconfigOptions): string;
  addUser(name: string, groups?: string[]): string;
  tokenFor(user: string): string;
  tokenForServiceAccount(namespace: string, name: string): string;
  /** Client connections the server has accepted so far. */
  connectionsAccepted(): number;
  stop(): Promise<void>;
}

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const store = new Store({
    ...(options.now ? { now: options.now } : {}),
    ...(options.historyLimit ? { historyLimit: options.historyLimit } : {}),
  });
  bootstrap(store);
  for (const o of options.objects ?? []) store.create(resource(o.resource), o.object);
  const auth = new Authenticator(store);
  for (const u of options.users ?? []) auth.addUser(u.name, u.groups ?? []);
  const c: ClusterContext = { store, auth, faults: new Faults(), log: new RequestLog() };
  const pipeline = new Pipeline(c);
  pipeline.handlers = clusterHandlers(c, pipeline.contextOf);

  let front: Front | undefined;
  const backend = await startBackend((req, remotePort) =>
    pipeline.handle(req, front?.connection(remotePort)),
  );
  const material = options.https ? pki() : undefined;
  front = new Front(
    backend.port,
    material && { key: material.serverKey, cert: material.serverCert, ca: material.caCert },
  );
  const port = await front.listen();
  const url = `${options.https ? "https" : "http"}://127.0.0.1:${port}`;

  const controllers =
    options.controllers === false
      ? undefined
      : startControllers(
          store,
          auth,
          url,
          material?.caCert,
          options.controllers === true ? {} : (options.controllers ?? {}),
        );
  // Simplification: bookmarks go out on a fixed timer (or store.bookmark()), not per watcher.
  const bookmarks = setInterval(() => store.bookmark(), options.bookmarkIntervalMs ?? 60_000);
  bookmarks.unref?.();
  const dir = mkdtempSync(join(tmpdir(), "aicr-fake-cluster-"));
  let files = 0;

  const tokenFor = (user: string): string => {
    const sa = user.match(/^system:serviceaccount:([^:]+):([^:]+)$/);
    if (sa) return auth.tokenForServiceAccount(sa[1]!, sa[2]!);
    const t = auth.tokenFor(user);
    if (!t) throw new Error(`unknown user ${user}; add it with addUser()`);
    return t;
  };

  return {
    url,
    port,
    store,
    log: c.log,
    faults: c.faults,
    caCert: material?.caCert,
    addUser: (name, groups = []) => auth.addUser(name, groups),
    tokenFor,
    tokenForServiceAccount: (ns, name) => auth.tokenForServiceAccount(ns, name),
    connectionsAccepted: () => front?.accepted ?? 0,
    kubeconfigFor(user, opts = {}) {
      const file = `kubeconfig-${++files}`;
      if (opts.auth === "certificate") {
        if (!material) throw new Error("client certificates need startCluster({ https: true })");
        const info = auth.user(user);
        if (!info) throw new Error(`unknown user ${user}; add it with addUser()`);
        const groups = info.groups.filter((g) => g !== "system:authenticated");
        return writeKubeconfig(
          dir,
          file,
          url,
          material.caCert,
          user,
          { cert: clientCert(user, groups) },
          opts.namespace,
        );
      }
      return writeKubeconfig(
        dir,
        file,
        url,
        material?.caCert,
        user,
        { token: tokenFor(user) },
        opts.namespace,
      );
    },
    async stop() {
      clearInterval(bookmarks);
      await controllers?.stop();
      await front?.close();
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
