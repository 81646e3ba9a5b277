/**
 * systemd over D-Bus for the SystemD collector: which socket to ask (beneath the host root), the
 * connection (or one warning saying why there is none), and one unit's properties.
 */
import { existsSync } from "node:fs";
import { DbusConnection } from "./_dbus-client.ts";
import type { DbusVariant } from "./_dbus-signature.ts";
import { hostPath } from "./_host-fs.ts";
import { unitReadings } from "./_systemd-readings.ts";
import { type CollectorOptions, errorText, type Readings } from "./_types.ts";

/** systemd's own socket (no bus daemon in between; root only). The agent pod mounts the host's /run/systemd. */
export const PRIVATE_SOCKET = "/run/systemd/private";
/** The system bus: where a non-root caller reaches systemd, as systemctl does. */
export const SYSTEM_BUS_SOCKET = "/run/dbus/system_bus_socket";
// Each wait at most 3 s: a silent systemd is reported with its cause inside the collector's own 10 s.
const CONNECT_TIMEOUT_MS = 3_000;
const CALL_TIMEOUT_MS = 3_000;
const SYSTEMD = "org.freedesktop.systemd1";
const MANAGER = { destination: SYSTEMD, path: "/org/freedesktop/systemd1", interface: `${SYSTEMD}.Manager` };

/**
 * Where to ask, as systemctl does: root tries the private socket first, then the system bus (in the
 * agent's pod only /run/systemd is mounted, so that is the private socket); anyone else the bus.
 */
export function systemdSockets(euid: number): { path: string; bus: boolean }[] {
  const bus = { path: SYSTEM_BUS_SOCKET, bus: true };
  return euid === 0 ? [{ path: PRIVATE_SOCKET, bus: false }, bus] : [bus];
}

/** A connection to systemd, or undefined after one warning naming every socket tried and why it failed. */
export async function openSystemd(options: CollectorOptions): Promise<DbusConnection | undefined> {
  const uid = process.geteuid?.() ?? 0;
  const tried: string[] = [];
  for (const socket of systemdSockets(uid)) {
    const path = hostPath(options.hostRoot, socket.path);
    try {
      const conn = await DbusConnection.open({
        path,
        uid,
        bus: socket.bus,
        signal: options.signal,
        timeoutMs: CONNECT_TIMEOUT_MS,
      });
      if (!socket.bus) return conn;
      // A bus without systemd on it is no way to systemd either.
      const owner = { destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus" };
      const ask = { ...owner, interface: "org.freedesktop.DBus", member: "GetNameOwner" };
      await conn
        .call(
          { ...ask, signature: "s", body: [SYSTEMD] },
          { signal: options.signal, timeoutMs: CALL_TIMEOUT_MS },
        )
        .catch((err: unknown) => {
          conn.close();
          throw err;
        });
      return conn;
    } catch (err) {
      if (options.signal.aborted) throw err;
      tried.push(`${path}: ${errorText(err)}`);
    }
  }
  const privateSocket = hostPath(options.hostRoot, PRIVATE_SOCKET);
  // A non-root agent beside a mounted /run/systemd: systemd admits only root on its private socket.
  const hint =
    uid !== 0 && existsSync(privateSocket)
      ? {
          remedy: `this process runs as uid ${uid}, and systemd answers ${privateSocket} for root only: run the agent as root (securityContext runAsUser: 0)`,
        }
      : {};
  options.log.warn("systemd is not reachable over D-Bus; SystemD is empty", {
    tried: tried.join("; "),
    ...hint,
  });
  return undefined;
}

/** LoadUnit (loads it if it is not in memory; a missing unit comes back as a not-found stub), then GetAll. */
export async function readUnit(
  conn: DbusConnection,
  unit: string,
  signal: AbortSignal,
): Promise<Readings | undefined> {
  const o = { signal, timeoutMs: CALL_TIMEOUT_MS };
  const loaded = await conn.call({ ...MANAGER, member: "LoadUnit", signature: "s", body: [unit] }, o);
  const path = loaded.body[0];
  if (loaded.signature !== "o" || typeof path !== "string")
    throw new Error(`LoadUnit answered ${JSON.stringify(loaded.signature)}, not an object path`);
  const props = { destination: SYSTEMD, path, interface: "org.freedesktop.DBus.Properties" };
  // An empty interface name: the properties of every interface (Unit, Service…), as the Go original asks.
  const all = await conn.call({ ...props, member: "GetAll", signature: "s", body: [""] }, o);
  if (all.signature !== "a{sv}")
    throw new Error(`GetAll answered ${JSON.stringify(all.signature)}, not a{sv}`);
  return unitReadings(all.body[0] as [string, DbusVariant][]);
}
