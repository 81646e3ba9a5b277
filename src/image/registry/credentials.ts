/**
 * The credentials a push presents: --username with --password-stdin, else what `docker login`
 * stored (config.json entry or credential helper), else none (anonymous).
 */
import type { Logger } from "../../core/log.ts";
import { askHelper } from "./_cred-helper.ts";
import { configCredential, helperServer } from "./_docker-config.ts";

export type Credentials =
  | { kind: "basic"; username: string; password: string; source: string }
  /** An OAuth2 refresh token (Docker's `identitytoken`, or a helper's `<token>` user). */
  | { kind: "identity-token"; username: string; token: string; source: string };

export interface CredentialOptions {
  registry: string;
  username?: string | undefined;
  password?: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  signal: AbortSignal;
  log: Logger;
}

/** The user a credential names, for messages (never the secret). */
export const userOf = (c: Credentials | undefined): string => (c ? c.username || "(token)" : "(anonymous)");

export async function resolveCredentials(o: CredentialOptions): Promise<Credentials | undefined> {
  if (o.username !== undefined) {
    return { kind: "basic", username: o.username, password: o.password ?? "", source: "--username" };
  }
  for (const c of await configCredential(o.registry, o.env)) {
    if (c.kind !== "helper") return c;
    const server = helperServer(o.registry);
    let answer: Awaited<ReturnType<typeof askHelper>>;
    try {
      answer = await askHelper(c.helper, server, o.env, o.signal);
    } catch (err) {
      // a global credsStore that is missing here (a config copied from a laptop) must not block a push
      if (c.explicit || o.signal.aborted) throw err;
      o.log.warn(`Ignoring credsStore ${JSON.stringify(c.helper)}: ${(err as Error).message}`);
      continue;
    }
    if (!answer) continue;
    const source = `docker-credential-${c.helper}`;
    o.log.debug("credentials from a credential helper", { helper: source, user: answer.username });
    return answer.username === "<token>"
      ? { kind: "identity-token", username: "", token: answer.secret, source }
      : { kind: "basic", username: answer.username, password: answer.secret, source };
  }
  return undefined;
}
