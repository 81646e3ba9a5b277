/**
 * SASL EXTERNAL, the way a D-Bus client authenticates on a unix socket (pure): one NUL byte, then
 * `AUTH EXTERNAL <uid as hex of its decimal digits>` and `BEGIN`; the server answers `OK <guid>`
 * (the binary protocol starts after it), `REJECTED <mechanisms>` or `ERROR`. The kernel vouches for
 * the uid (SO_PEERCRED); the string only names it. Lines end with CRLF.
 */

/** The server's lines are short; a longer one is not a D-Bus server. */
export const MAX_AUTH_LINE_BYTES = 16 * 1024;

/**
 * The client's whole side, BEGIN included, in one write — as sd-bus's own clients (systemctl) send it.
 * Sending BEGIN only after OK, together with the first call, can leave systemd 252 waiting on a
 * private connection with the call unread (seen here about one connection in twenty).
 */
export function authRequest(uid: number): string {
  const hex = Buffer.from(String(uid), "ascii").toString("hex");
  return `\0AUTH EXTERNAL ${hex}\r\nBEGIN\r\n`;
}

export type AuthReply = { ok: true; guid: string } | { ok: false; reason: string };

/** One line from the server (without its CRLF). */
export function parseAuthReply(line: string): AuthReply {
  const [command = "", ...rest] = line.split(" ");
  const arg = rest.join(" ");
  if (command === "OK" && /^[0-9a-f]{32}$/i.test(arg)) return { ok: true, guid: arg.toLowerCase() };
  if (command === "REJECTED")
    return { ok: false, reason: `authentication rejected (the server offers: ${arg || "nothing"})` };
  if (command === "ERROR") return { ok: false, reason: `authentication error${arg ? `: ${arg}` : ""}` };
  return { ok: false, reason: `not a D-Bus authentication reply: ${JSON.stringify(line.slice(0, 80))}` };
}

/**
 * The first complete line in `buffered` (bytes after it are the start of the binary protocol);
 * undefined while the line is incomplete; throws past MAX_AUTH_LINE_BYTES without a line end.
 */
export function takeAuthLine(buffered: Uint8Array): { line: string; rest: Uint8Array } | undefined {
  for (let i = 0; i + 1 < buffered.length; i++) {
    if (buffered[i] === 0x0d && buffered[i + 1] === 0x0a) {
      return {
        line: Buffer.from(buffered.subarray(0, i)).toString("latin1"),
        rest: buffered.subarray(i + 2),
      };
    }
  }
  if (buffered.length > MAX_AUTH_LINE_BYTES)
    throw new Error(`the server sent ${buffered.length} bytes without a line end during authentication`);
  return undefined;
}
