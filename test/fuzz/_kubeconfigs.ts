/**
 * Random kubeconfigs, each holding the workspace's secrets (a token, a client key, a password, an
 * exec plugin's output) where a careless error message would quote them: well-formed ones pointing at
 * the counting server, and broken ones — a missing or mismatched field, a wrong type, a bad server
 * URL or proxy, a key without its certificate, token files of every hostile kind, exec plugins that
 * fail, print the token on stdout or succeed, and the text cut or garbled near the token (an
 * unterminated quote a few lines after `token:`, as issue 25 found).
 */
import fc from "fast-check";
import { stringify } from "yaml";
import { nasty, yamlValue } from "./_arbitraries.ts";
import type { Secrets } from "./_harness.ts";

const EXEC_API = "client.authentication.k8s.io/v1";

/** The hostile files a kubeconfig's token-file may name, by kind. */
export type TokenFiles = Partial<
  Record<"dev-zero" | "fifo" | "big-4MiB" | "directory" | "proc-file", string>
>;

/**
 * Kubeconfig texts for `server`. `tokenFiles`: the hostile files a `token-file:` may name — an
 * in-process caller leaves out the FIFO (a synchronous open of it would block the test runner
 * itself); `skip`: variants left out while known to fail (regressions.json ids `kubeconfig: token-file ← <kind>`).
 */
export function kubeconfigArb(
  server: string,
  secrets: Secrets,
  certData: string,
  tokenFiles: TokenFiles = {},
  skip: (id: string) => boolean = () => false,
): fc.Arbitrary<string> {
  const serverUrl = fc.oneof(
    { weight: 6, arbitrary: fc.constant(`http://${server}`) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        `https://${server}`,
        `http://${server}/prefix/`,
        "",
        "ftp://x",
        "http://[::1",
        "127.0.0.1:1",
        "https://127.0.0.1:1",
        `http://fuzz:${secrets.password}@${server}`,
        `HTTP://${server}`,
      ),
    },
    { weight: 1, arbitrary: nasty },
  );
  const execUser = (script: string) => ({
    exec: { apiVersion: EXEC_API, command: "/bin/sh", args: ["-c", script], interactiveMode: "Never" },
  });
  const credential = JSON.stringify({
    apiVersion: EXEC_API,
    kind: "ExecCredential",
    status: { token: secrets.token },
  });
  const user = fc.oneof(
    { weight: 4, arbitrary: fc.constant({ token: secrets.token }) },
    {
      weight: 2,
      arbitrary: fc.constant({ "client-certificate-data": certData, "client-key-data": secrets.keyData }),
    },
    {
      weight: 4,
      arbitrary: fc.constantFrom<Record<string, unknown>>(
        { "client-key-data": secrets.keyData },
        { "client-certificate-data": "bm90IGEgY2VydA==", "client-key-data": secrets.keyData },
        { "client-certificate-data": certData, "client-key-data": `!!${secrets.token}` },
        { "token-file": "/nonexistent/token" },
        { username: "fuzz", password: secrets.password },
        { exec: { apiVersion: EXEC_API, command: "/bin/false" } },
        { exec: { apiVersion: EXEC_API, command: "./no-such-plugin" } },
        { exec: { apiVersion: "client.authentication.k8s.io/v9", command: "/bin/true" } },
        execUser(`echo ${secrets.token}; exit 1`),
        execUser(`echo '${credential}'`),
        execUser(`echo '{"kind":"ExecCredential","status":{"token":"${secrets.token}"'`),
        { "auth-provider": { name: "oidc", config: { "id-token": secrets.token } } },
        { token: secrets.token, "client-key-data": secrets.keyData },
      ),
    },
    { weight: 1, arbitrary: yamlValue },
    ...Object.entries(tokenFiles)
      .filter(([kind]) => !skip(`kubeconfig: token-file ← ${kind}`))
      .map(([, path]) => ({ weight: 1, arbitrary: fc.constant<unknown>({ "token-file": path }) })),
  );
  const cluster = fc.record(
    {
      server: serverUrl,
      "certificate-authority-data": fc.constantFrom("bm90IGEgY2E=", "!!!", certData),
      "insecure-skip-tls-verify": fc.oneof(fc.boolean(), nasty),
      "proxy-url": fc.constantFrom(
        "http://127.0.0.1:1",
        "socks5://127.0.0.1:1",
        "HTTP://127.0.0.1:1",
        "",
        "::",
      ),
      "tls-server-name": nasty,
    },
    { requiredKeys: ["server"] },
  );
  const name = fc.oneof({ weight: 5, arbitrary: fc.constant("fuzz") }, { weight: 1, arbitrary: nasty });
  const document = fc.record(
    {
      apiVersion: fc.oneof({ weight: 5, arbitrary: fc.constant("v1") }, { weight: 1, arbitrary: nasty }),
      kind: fc.oneof({ weight: 5, arbitrary: fc.constant("Config") }, { weight: 1, arbitrary: nasty }),
      clusters: fc.oneof(
        { weight: 6, arbitrary: fc.tuple(name, cluster).map(([n, c]) => [{ name: n, cluster: c }]) },
        { weight: 1, arbitrary: yamlValue },
      ),
      users: fc.oneof(
        { weight: 6, arbitrary: fc.tuple(name, user).map(([n, u]) => [{ name: n, user: u }]) },
        { weight: 1, arbitrary: yamlValue },
      ),
      contexts: fc.oneof(
        {
          weight: 6,
          arbitrary: fc
            .tuple(name, name, name, fc.option(nasty))
            .map(([n, c, u, ns]) => [
              { name: n, context: { cluster: c, user: u, ...(ns === null ? {} : { namespace: ns }) } },
            ]),
        },
        { weight: 1, arbitrary: yamlValue },
      ),
      "current-context": name,
      preferences: yamlValue,
    },
    { requiredKeys: ["clusters", "users", "contexts", "current-context"] },
  );
  return fc
    .tuple(
      document,
      fc.constantFrom("none", "none", "quote-after-token", "cut-after-token", "tab", "json"),
      fc.nat(40),
    )
    .map(([doc, damage, at]) => {
      if (damage === "json") return JSON.stringify(doc);
      let text = stringify(doc, { aliasDuplicateObjects: false });
      const token = Math.max(0, text.indexOf(secrets.token), text.indexOf(secrets.keyData.slice(0, 40)));
      const after = Math.min(text.length, token + 80 + at);
      if (damage === "quote-after-token")
        text = `${text.slice(0, after)}\n  bad: "unterminated\n${text.slice(after)}`;
      if (damage === "cut-after-token") text = text.slice(0, after);
      if (damage === "tab") text = `${text.slice(0, after)}\t${text.slice(after)}`;
      return text;
    });
}
