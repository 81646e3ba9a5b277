/**
 * The ecosystem's tools for the supply-chain tests (built by test/tools/build.ts, `npm run
 * test-tools`), and the test registry WITH the referrers API.
 *
 *   const crane = await tool("crane");        { path } or { missing: why } — a test that needs it
 *                                             skips naming `missing` (never passes without it)
 *   await toolPath("oras")                    the path, or throws the reason it is missing
 *   const reg = await startReferrersRegistry()  { host, url, stop() } on a free loopback port
 */
import { buildTools, type ToolName } from "./build.ts";

export type { ToolName } from "./build.ts";

export type Tool = { path: string; missing?: undefined } | { path?: undefined; missing: string };

/** The tool's binary, building the missing ones first (a warm cache answers at once). */
export async function tool(name: ToolName): Promise<Tool> {
  const r = (await buildTools()).find((t) => t.name === name);
  if (!r) return { missing: `${name} is not one of the test tools` };
  return "path" in r ? { path: r.path } : { missing: r.failed };
}

export async function toolPath(name: ToolName): Promise<string> {
  const t = await tool(name);
  if (t.missing !== undefined) throw new Error(t.missing);
  return t.path;
}

export interface ReferrersRegistry {
  /** 127.0.0.1:<port> */
  host: string;
  /** http://127.0.0.1:<port> (plain HTTP: the registry serves no TLS) */
  url: string;
  stop(): Promise<void>;
}

/**
 * go-containerregistry's in-memory registry with the referrers API (test/tools/registry/main.go says
 * what it adds to pkg/registry), on a free loopback port it picks itself (no probe-then-bind race):
 * it prints its address once it listens.
 */
export async function startReferrersRegistry(): Promise<ReferrersRegistry> {
  const bin = await toolPath("registry");
  const proc = Bun.spawn([bin, "-addr", "127.0.0.1:0"], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const reader = proc.stdout.getReader();
  let seen = "";
  while (!seen.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) {
      const err = await new Response(proc.stderr).text();
      throw new Error(`the referrers registry exited (${await proc.exited}) before listening: ${seen}${err}`);
    }
    seen += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const url = seen.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/)?.[1];
  if (!url) {
    proc.kill();
    throw new Error(`the referrers registry printed no address: ${seen}`);
  }
  return {
    host: url.slice("http://".length),
    url,
    async stop() {
      proc.kill();
      await proc.exited;
    },
  };
}
