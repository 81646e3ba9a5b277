/**
 * startControlPlane: etcd, kube-apiserver, kube-controller-manager and kube-scheduler, built from
 * Kubernetes' own modules (test/control-plane), as child processes of one `control-plane up`. It dies
 * with this process: `up` stops everything when its standard input closes, and its directory goes
 * with it.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { controlPlaneBinary } from "../../control-plane/build.ts";
import { clientCert } from "../certs.ts";
import { writeKubeconfig } from "../kubeconfig.ts";
import { type ControlPlaneFiles, layOut, type StaticUser } from "./pki.ts";

export interface ControlPlane extends ControlPlaneFiles {
  url: string;
  port: number;
  kubectl: string;
  binDir: string;
  auditLog: string;
  /** A kubeconfig file for admin (client certificate, system:masters), straight to the apiserver. */
  adminKubeconfig: string;
  /** The last lines of a component's log, for failure messages. */
  tail(
    component: "etcd" | "kube-apiserver" | "kube-controller-manager" | "kube-scheduler",
    lines?: number,
  ): string;
  stop(): Promise<void>;
}

let spare: Promise<ControlPlane> | undefined;

/**
 * `control-plane up` under a shell that removes its directory once it has exited, however that comes
 * about: stop() (SIGTERM, passed on), or the end of this process closing its stdin — bun test runs no
 * exit hooks, and the spare nobody takes is stopped only that way. argv: binary, dir.
 */
const SUPERVISE = [
  `trap 'kill -TERM "$up" 2>/dev/null; wait "$up"; rm -rf "$1"; exit 143' TERM INT`,
  // A background command's stdin is /dev/null unless redirected: hand it ours through fd 3.
  "exec 3<&0",
  `"$0" up --dir "$1" <&3 3<&- &`,
  "exec 3<&-",
  "up=$!",
  `wait "$up"`,
  "code=$?",
  `rm -rf "$1"`,
  `exit "$code"`,
].join("\n");

/**
 * A control plane for a new test cluster. Inside `bun test`, one spare is started in the background
 * once the one handed out is ready, so the next cluster (the next test file, or the next test of a
 * suite that starts one per test) does not wait the 3–5 s an apiserver takes to come up. A spare
 * nobody takes stops with the test process (`up` stops when its stdin closes).
 */
export function takeControlPlane(): Promise<ControlPlane> {
  const cp = spare ?? startControlPlane([]);
  spare = undefined;
  if (process.env.NODE_ENV === "test") {
    void cp.then(
      () => {
        spare ??= startControlPlane([]);
        spare.catch(() => {}); // a failed spare fails the cluster that takes it, not this one
      },
      () => {},
    );
  }
  return cp;
}

export async function startControlPlane(users: StaticUser[]): Promise<ControlPlane> {
  const bin = await controlPlaneBinary();
  const dir = mkdtempSync(join(tmpdir(), "aicr-real-cluster-"));
  // The apiserver's port is chosen and held by `up` until the apiserver binds it (no port found here
  // and freed before the child binds it: another process could take it in between); the ready line
  // names it. The controller-manager's and scheduler's kubeconfigs are not used for the address
  // (`up` gives them --master), so they are written before the port is known.
  const files = layOut(dir, "https://127.0.0.1", users);
  const proc = Bun.spawn(["sh", "-c", SUPERVISE, bin.controlPlane, dir], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const tail: ControlPlane["tail"] = (component, lines = 30) => {
    try {
      return readFileSync(join(dir, `${component}.log`), "utf8")
        .trimEnd()
        .split("\n")
        .slice(-lines)
        .join("\n");
    } catch {
      return "";
    }
  };
  const reader = proc.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  if (!text.includes('"ready":true')) {
    const err = await new Response(proc.stderr).text();
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`the control plane did not start: ${err}\n${tail("kube-apiserver")}`);
  }
  const { url, port } = JSON.parse(text.slice(0, text.indexOf("\n"))) as { url: string; port: number };
  let stopped: Promise<void> | undefined;
  return {
    ...files,
    url,
    port,
    kubectl: bin.kubectl,
    binDir: bin.dir,
    auditLog: join(dir, "audit.log"),
    adminKubeconfig: writeKubeconfig(dir, "admin.kubeconfig", url, files.caCert, "admin", {
      cert: clientCert("admin", ["system:masters"]),
    }),
    tail,
    stop() {
      stopped ??= (async () => {
        proc.kill("SIGTERM");
        await proc.exited;
        rmSync(dir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}
