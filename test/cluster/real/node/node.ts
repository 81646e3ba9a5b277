/**
 * A real Kubernetes node beside the process kubelet: the kubelet (v1.36.3, test/control-plane),
 * containerd 2.x with runc and the CNI bridge, and a fake GPU device plugin, in a network namespace of
 * their own (and a PID and mount namespace of their own inside it), supervised by `aicr-node up`
 * (test/node). See README.md in this folder for what it is made of and how it differs from a real
 * cluster's node.
 *
 *   const node = await startRealNode({ name: "real-gpu-1", apiserverPort: cp.port, servicePort: proxy.port,
 *     registries: [{ host: registry.host }], sandboxImage: `${registry.host}/pause:3.10` });
 *   await node.containers();   // containerd's containers in the k8s.io namespace (ctr)
 *   await node.stop();         // nothing left: processes, mounts, cgroups, namespaces, rules, files
 *
 * `up` also stops everything when this process's end closes its standard input (bun test runs no exit
 * hooks), and a later `up` sweeps the leftovers of one that was killed outright (SIGKILL).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { controlPlaneBinary } from "../../../control-plane/build.ts";
import { nodeBinaries } from "../../../node/build.ts";
import { registryConfig } from "../../../registry/registry.ts";
import { clientCert, pki } from "../../certs.ts";

/** What this machine lacks to run a real node, or undefined when it has it all. */
export function realNodeMissing(): string | undefined {
  if (process.getuid?.() !== 0) return "not root (network, PID and mount namespaces, cgroups, iptables)";
  const files = [
    "/usr/sbin/runc",
    "/usr/lib/cni/bridge",
    "/usr/lib/cni/host-local",
    "/usr/lib/cni/loopback",
    "/usr/lib/cni/portmap",
    "/usr/bin/docker-registry",
  ];
  const absent = files.filter((f) => !existsSync(f));
  if (absent.length > 0)
    return `missing ${absent.join(", ")} (apt-get install runc containernetworking-plugins docker-registry)`;
  for (const tool of ["ip", "nsenter", "iptables"])
    if (!Bun.which(tool, { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" }))
      return `no ${tool} on PATH (iproute2, util-linux, iptables)`;
  if (!readFileSync("/proc/filesystems", "utf8").includes("overlay")) return "no overlayfs in this kernel";
  return undefined;
}

export interface RealNodeOptions {
  /** The Node's name (and hostname label). */
  name: string;
  /** Fake `nvidia.com/gpu` devices the device plugin advertises (default 8; 0: no plugin, no GPU labels). */
  gpus?: number;
  /** Labels besides the GPU node's `nvidia.com/gpu.present=true` (kubelet --node-labels). */
  labels?: Record<string, string>;
  /** A real systemd's runtime directory (`<runDir>/systemd`), bound at the node's /run/systemd. */
  systemdDir?: string;
  /** kube-apiserver's port on 127.0.0.1: the kubelet talks to it directly (relayed into the namespace). */
  apiserverPort: number;
  /** The fault proxy's port on 127.0.0.1: where the `kubernetes` Service (10.96.0.1:443) leads. */
  servicePort: number;
  /**
   * The registries the node pulls from: Debian's docker-registry on a free 127.0.0.1 port each, run by
   * the node's supervisor (so they end with the node, however this process ends), storage in the
   * node's directory. `tls`: HTTPS with the test CA; `htpasswd`: basic auth (bcrypt).
   */
  registries: NodeRegistryOptions[];
  /** The pinned sandbox (pause) image: `<registry index>` and `<repository>:<tag>` in it. */
  sandboxImage: { registry: number; name: string };
  /** The kubelet's klog verbosity (default 1). */
  verbosity?: number;
}

export interface NodeRegistryOptions {
  tls?: boolean;
  htpasswd?: { user: string; password: string };
}

export interface NodeRegistry {
  /** 127.0.0.1:<port>, on this host and (relayed) on the node alike. */
  host: string;
  url: string;
  /** The CA's PEM file (TLS registries; the test CA). */
  caFile?: string;
  user?: string;
  password?: string;
}

export interface RealNode {
  name: string;
  /** The registries, in the order asked for. */
  registries: NodeRegistry[];
  /** 10.250.<index>.2: the node's InternalIP (the kubelet listens on :10250 there). */
  nodeIP: string;
  /** 10.250.<index>.1: the host's end of the veth pair. */
  hostIP: string;
  index: number;
  netns: string;
  cgroupRoot: string;
  podCIDR: string;
  /** The node's directory: configs, containerd's and the kubelet's state, logs (logs/<component>.log). */
  dir: string;
  containerdSocket: string;
  kubeletRoot: string;
  /** The nvidia-smi stand-in on the host (the same path on the node): for an operator's hostPath (File) mount. */
  nvidiaSmi: string;
  /** ctr (containerd 2.x's own client) against this node's containerd. */
  ctr(args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** IDs of containerd's containers in the CRI namespace (k8s.io): sandboxes and containers. */
  containers(): Promise<string[]>;
  /** The last lines of a component's log: init, containerd, kubelet, device-plugin. */
  tail(component: string, lines?: number): string;
  /** The supervisor's process ID (`aicr-node up`). */
  supervisorPid: number;
  /** Restarts the kubelet (its device plugin registers again); the node stays. */
  restartKubelet(): void;
  stop(): Promise<void>;
}

/** What `aicr-node up` prints once the node's processes run. */
interface Ready {
  ready: true;
  index: number;
  nodeIP: string;
  hostIP: string;
  netns: string;
  cgroupRoot: string;
  podCIDR: string;
  containerdSocket: string;
  kubeletRoot: string;
}

export async function startRealNode(o: RealNodeOptions): Promise<RealNode> {
  const missing = realNodeMissing();
  if (missing) throw new Error(`a real node cannot run here: ${missing}`);
  const [cp, bin] = await Promise.all([controlPlaneBinary(), nodeBinaries()]);
  const dir = mkdtempSync(join(tmpdir(), "aicr-node-"));
  const p = pki();
  const w = (name: string, text: string, mode = 0o600) => writeFileSync(join(dir, name), text, { mode });
  w("ca.crt", p.caCert, 0o644);
  // The supervisor signs the kubelet's serving certificate for the node's address (known only once
  // it has claimed a network index) with the test CA; the directory goes when the node does.
  w("ca.key", p.caKey);
  const client = clientCert(`system:node:${o.name}`, ["system:nodes"]);
  w("kubelet-client.crt", client.cert);
  w("kubelet-client.key", client.key);
  const registries = await Promise.all(o.registries.map((r, i) => layOutRegistry(dir, i, r)));
  const gpus = o.gpus ?? 8;
  const config = {
    name: o.name,
    dir,
    controlPlane: cp.controlPlane,
    nvidiaSmi: bin.nvidiaSmi,
    apiserverPort: o.apiserverPort,
    servicePort: o.servicePort,
    registries: registries.map((r) => ({ host: r.host, ca: r.caFile ?? "", serve: r.config })),
    sandboxImage: `${registries[o.sandboxImage.registry]!.host}/${o.sandboxImage.name}`,
    labels: { ...(gpus > 0 ? { "nvidia.com/gpu.present": "true" } : {}), ...o.labels },
    gpus,
    systemdDir: o.systemdDir ?? "",
    verbosity: o.verbosity ?? 1,
  };
  w("node.json", `${JSON.stringify(config, null, 2)}\n`, 0o644);

  const proc = Bun.spawn([bin.aicrNode, "up", "--config", join(dir, "node.json")], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  let stderr = "";
  const dec = new TextDecoder();
  const pumpErr = (async () => {
    for await (const chunk of proc.stderr) stderr += dec.decode(chunk, { stream: true });
  })();
  const reader = proc.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += dec.decode(value, { stream: true });
  }
  // Keep reading stdout so the supervisor never blocks on a full pipe.
  void (async () => {
    while (!(await reader.read()).done) {}
  })().catch(() => {});
  const line = text.split("\n")[0] ?? "";
  if (!line.includes('"ready":true')) {
    await proc.exited;
    await pumpErr;
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`the real node ${o.name} did not start:\n${stderr}`);
  }
  const ready = JSON.parse(line) as Ready;

  const ctr = async (args: string[]) => {
    const r = Bun.spawn([bin.ctr, "--address", ready.containerdSocket, ...args], {
      stdout: "pipe",
      stderr: "pipe",
      stdin: "ignore",
    });
    const [stdout, err, code] = await Promise.all([
      new Response(r.stdout).text(),
      new Response(r.stderr).text(),
      r.exited,
    ]);
    return { code, stdout, stderr: err };
  };
  let stopped: Promise<void> | undefined;
  return {
    name: o.name,
    registries: registries.map(({ config: _, ...r }) => r),
    nodeIP: ready.nodeIP,
    hostIP: ready.hostIP,
    index: ready.index,
    netns: ready.netns,
    cgroupRoot: ready.cgroupRoot,
    podCIDR: ready.podCIDR,
    dir,
    containerdSocket: ready.containerdSocket,
    kubeletRoot: ready.kubeletRoot,
    nvidiaSmi: bin.nvidiaSmi,
    supervisorPid: proc.pid,
    ctr,
    async containers() {
      const r = await ctr(["--namespace", "k8s.io", "containers", "list", "--quiet"]);
      if (r.code !== 0) throw new Error(`ctr containers list: ${r.stderr}`);
      return r.stdout.split("\n").filter(Boolean);
    },
    tail(component, lines = 30) {
      const f = join(dir, "logs", `${component}.log`);
      if (!existsSync(f)) return "";
      return readFileSync(f, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
    },
    restartKubelet() {
      proc.stdin.write("restart-kubelet\n");
      proc.stdin.flush();
    },
    stop() {
      stopped ??= (async () => {
        proc.kill("SIGTERM");
        await proc.exited;
        await pumpErr.catch(() => {});
        if (proc.exitCode !== 0)
          console.error(`[real-node ${o.name}] supervisor exit ${proc.exitCode}:\n${stderr}`);
      })();
      return stopped;
    },
  };
}

function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

/**
 * One registry's directory under the node's (config.yml, storage, TLS and htpasswd files) — the
 * configuration test/registry/registry.ts writes for the push tests, run here by the node's supervisor.
 */
async function layOutRegistry(
  nodeDir: string,
  i: number,
  o: NodeRegistryOptions,
): Promise<NodeRegistry & { config: string }> {
  const dir = join(nodeDir, `registry-${i}`);
  mkdirSync(join(dir, "data"), { recursive: true });
  const port = freePort();
  const out: NodeRegistry & { config: string } = {
    host: `127.0.0.1:${port}`,
    url: `${o.tls ? "https" : "http"}://127.0.0.1:${port}`,
    config: join(dir, "config.yml"),
  };
  if (o.tls) {
    writeFileSync(join(dir, "ca.crt"), pki().caCert);
    out.caFile = join(dir, "ca.crt");
  }
  if (o.htpasswd) {
    // cost 4: the registry checks the hash on every request (the default cost takes ~70 ms each)
    const hash = await Bun.password.hash(o.htpasswd.password, { algorithm: "bcrypt", cost: 4 });
    writeFileSync(join(dir, "htpasswd"), `${o.htpasswd.user}:${hash}\n`, { mode: 0o600 });
    out.user = o.htpasswd.user;
    out.password = o.htpasswd.password;
  }
  writeFileSync(out.config, registryConfig(dir, port, o));
  return out;
}
