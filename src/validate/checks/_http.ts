/**
 * The one HTTP GET the checks make from their pod (the DCGM exporter, Prometheus): 30 s in all, at
 * most 1 MiB of body read (the rest is left unread and `truncated` says so), no redirect followed,
 * TLS always verified.
 */

const TOTAL_MS = 30_000;
export const MAX_BODY_BYTES = 1024 * 1024;

export async function boundedGet(
  url: string,
  signal: AbortSignal,
): Promise<{ status: number; body: string; truncated: boolean }> {
  const res = await fetch(url, {
    signal: AbortSignal.any([signal, AbortSignal.timeout(TOTAL_MS)]),
    redirect: "manual",
    tls: { rejectUnauthorized: true },
  } as RequestInit);
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  const reader = res.body?.getReader();
  if (reader) {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (size + value.byteLength > MAX_BODY_BYTES) {
        chunks.push(value.subarray(0, MAX_BODY_BYTES - size));
        size = MAX_BODY_BYTES;
        truncated = true;
        await reader.cancel().catch(() => {});
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
  }
  return { status: res.status, body: Buffer.concat(chunks).toString("utf8"), truncated };
}
