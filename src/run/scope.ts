import { withTimeout } from "../core/async.ts";
import { timedOut } from "../core/deadline.ts";
import type { Logger } from "../core/log.ts";
import type { KubeClient, KubeObject, KubernetesObject } from "../kube/client.ts";
import { cleanupRun, type ReceiptRow } from "./cleanup.ts";
import { type CreateOwnedOptions, createOwned } from "./create-owned.ts";
import { CreatedSet } from "./created-set.ts";
import type { RunIdentity } from "./labels.ts";
import { onForcedExit } from "./shutdown.ts";

const CLEANUP_TIMEOUT_MS = 30_000;

export interface KeptObject {
  kind: string;
  namespace?: string | undefined;
  name: string;
  uid?: string | undefined;
}

export interface RunScopeOptions {
  client: KubeClient;
  identity: RunIdentity;
  log: Logger;
  /** false: --no-cleanup, the objects are listed as kept instead. */
  cleanup: boolean;
  /** How the operator's messages name this run's objects: "" (a snapshot run) or e.g. "validation". */
  noun?: string | undefined;
  /**
   * The one command that removes everything this run created (deleting its anchor lets the garbage
   * collector take the rest); undefined until the anchor exists.
   */
  removeCommand: () => string | undefined;
  /** The run's staging ConfigMap, swept by cleanup when the agent wrote it (never a delivered one). */
  staging?: (() => { namespace: string; name: string } | undefined) | undefined;
  /** Says that cleanup finished (default: an info line); the snapshot run prints it as a phase. */
  announce?: ((message: string, fields: Record<string, unknown>) => void) | undefined;
}

/**
 * One run's objects, from the first create to the last delete, for every command that creates any:
 * the journal (intents before creates, UIDs after), the report printed if the process is forced to
 * exit, and on disposal either the UID-pinned cleanup with its receipt or the list of what was kept
 * with the one command that removes it. Use it with `await using`, so no path skips the cleanup.
 */
export class RunScope implements AsyncDisposable {
  readonly created = new CreatedSet();
  readonly receipt: ReceiptRow[] = [];
  readonly kept: KeptObject[] = [];
  private readonly unregister: () => void;
  private disposed = false;

  constructor(private readonly o: RunScopeOptions) {
    // Still registered while cleanup runs: a second Ctrl-C during cleanup must still say what may be left.
    this.unregister = onForcedExit(() => this.leftovers());
  }

  /** Creates `object` under this run: journalled before the request, adopted only with proof. */
  create(object: KubernetesObject, signal: AbortSignal): Promise<KubeObject> {
    return createOwned(object, this.createOptions(signal));
  }

  createOptions(signal: AbortSignal): CreateOwnedOptions {
    const { client, identity, log } = this.o;
    return { client, created: this.created, identity, log, signal };
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    try {
      if (this.o.cleanup) await this.cleanUp();
      else this.keep();
    } catch (err) {
      // Never thrown from disposal: it would hide (or be suppressed with) the run's own outcome.
      this.o.log.warn(`cleanup failed: ${(err as Error).message}`, {
        remedy: `remove what is left with: ${this.o.removeCommand() ?? "(nothing was anchored)"}`,
      });
    } finally {
      this.unregister();
    }
  }

  private get noun(): string {
    return this.o.noun ? `${this.o.noun} ` : "";
  }

  private async cleanUp(): Promise<void> {
    const { client, identity, log } = this.o;
    const receipt = await withTimeout(
      cleanupRun({ client, created: this.created, identity, log, staging: this.o.staging?.() }),
      CLEANUP_TIMEOUT_MS,
      () =>
        timedOut(`cleanup did not finish within ${CLEANUP_TIMEOUT_MS / 1000}s`, {
          remedy: `remove what is left with: ${this.o.removeCommand() ?? "(nothing was anchored)"}`,
        }),
    );
    this.receipt.push(...receipt);
    const bad = receipt.filter((r) => r.outcome === "failed" || r.outcome === "left-behind");
    if (bad.length > 0)
      log.warn(`cleanup could not remove ${bad.length} ${this.noun}object(s)`, {
        objects: bad.map((r) => `${r.kind}/${r.name}`).join(","),
      });
    const announce = this.o.announce ?? ((message, fields) => log.info(message, fields));
    announce(`${this.o.noun ? `${this.o.noun} objects ` : ""}cleaned up`, {
      deleted: receipt.filter((r) => r.outcome === "deleted").length,
    });
  }

  private keep(): void {
    const entries = this.created.list();
    for (const e of entries) {
      this.kept.push({ kind: e.kind, namespace: e.namespace, name: e.name, uid: e.uid });
      this.o.log.info(`kept (--no-cleanup): ${e.kind} ${e.namespace ? `${e.namespace}/` : ""}${e.name}`, {
        uid: e.uid,
      });
    }
    const remove = this.o.removeCommand();
    if (entries.length > 0 && remove) this.o.log.info(`remove them all with: ${remove}`);
  }

  private leftovers(): string | undefined {
    const entries = this.created.list();
    if (entries.length === 0) return undefined;
    const lines = entries.map(
      (e) => `  ${e.kind} ${e.namespace ? `${e.namespace}/` : ""}${e.name} uid=${e.uid ?? "(unconfirmed)"}`,
    );
    const remove = this.o.removeCommand();
    return `exiting without cleanup; this ${this.noun}run may have left:\n${lines.join("\n")}${remove ? `\nremove them all with (the garbage collector takes the rest): ${remove}` : ""}`;
  }
}
