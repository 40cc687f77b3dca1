/**
 * The store facade: the ONE stable object that both the React UI and the
 * WebMCP tools go through.
 *
 * An agent command is: read the latest snapshot, apply ONE domain command,
 * wait until React has committed that revision to the DOM, return the
 * committed revision. Human clicks use the same command path without waiting.
 *
 * - `expectedRevision` (optional): refused with `revision_mismatch` when the
 *   latest snapshot has another revision (a human, or another call, changed the
 *   cart since the agent looked). Nothing is applied.
 * - `operationId` (optional): the first call that APPLIES remembers its result;
 *   a later call with the same operationId and the same command returns that
 *   same result (byte for byte) without applying again, even if its
 *   expectedRevision is stale by then. The same operationId with a different
 *   command is refused with `operation_id_conflict`. Refusals are not
 *   remembered: nothing was applied, so a retry is simply a new attempt.
 */
import { applyCommand, cartView, commandFingerprint, initialState, type Actor, type CartView, type Command, type StoreState } from './domain';

export type AgentOutcome =
  | {
      readonly ok: true;
      /** The revision this command produced; the DOM shows it when the call returns. */
      readonly revision: number;
      readonly committed: true;
      readonly operationId: string | null;
      readonly command: Command;
      readonly cart: CartView;
    }
  | {
      readonly ok: false;
      readonly error: 'revision_mismatch' | 'operation_id_conflict' | 'unknown_product' | 'quantity_out_of_range' | 'invalid_arguments' | 'commit_not_observed';
      readonly message: string;
      readonly currentRevision: number;
      readonly expectedRevision?: number;
      readonly operationId?: string;
      readonly cart?: CartView;
    };

export interface ActivityEntry {
  readonly seq: number;
  readonly actor: Actor;
  readonly text: string;
  readonly revision: number;
}

export interface AgentCommandOptions {
  readonly expectedRevision?: number;
  readonly operationId?: string;
}

/** How long an agent command waits for React to commit before it reports `commit_not_observed`. */
const COMMIT_TIMEOUT_MS = 5_000;

export class StoreFacade {
  private state: StoreState = initialState();
  private committed = 0;
  private readonly listeners = new Set<() => void>();
  private readonly waiters: { revision: number; resolve: (ok: boolean) => void }[] = [];
  private readonly operations = new Map<string, { fingerprint: string; outcome: Promise<AgentOutcome> }>();
  private activity: readonly ActivityEntry[] = [];
  private seq = 0;
  /** Agent calls answered from the operationId memory (shown in the DOM for tests). */
  replays = 0;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getSnapshot = (): StoreState => this.state;

  readonly getActivity = (): readonly ActivityEntry[] => this.activity;

  get committedRevision(): number {
    return this.committed;
  }

  /** Called by the React tree (useLayoutEffect) once `revision` is in the DOM. */
  markCommitted(revision: number): void {
    if (revision > this.committed) this.committed = revision;
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      if (w.revision <= this.committed) {
        this.waiters.splice(i, 1);
        w.resolve(true);
      }
    }
  }

  /** A human click: same command path, no revision check, no waiting. */
  dispatchHuman(command: Command): boolean {
    return this.apply(command, 'human').ok;
  }

  /** One agent command, resolved after React committed it. Never throws. */
  runAgentCommand(command: Command, options: AgentCommandOptions = {}): Promise<AgentOutcome> {
    const { operationId, expectedRevision } = options;
    if (operationId !== undefined) {
      const previous = this.operations.get(operationId);
      if (previous) {
        if (previous.fingerprint !== commandFingerprint(command)) {
          return Promise.resolve(this.refusal('operation_id_conflict', `operationId "${operationId}" was already used for a different command; use a new operationId.`, { operationId }));
        }
        this.replays++;
        this.log('agent', `retry of ${operationId} answered without applying again`);
        return previous.outcome;
      }
    }
    if (expectedRevision !== undefined && expectedRevision !== this.state.revision) {
      return Promise.resolve(
        this.refusal(
          'revision_mismatch',
          `The cart changed since revision ${expectedRevision} (it is now at revision ${this.state.revision}); nothing was changed. Read the cart again and decide.`,
          { expectedRevision, cart: cartView(this.state) },
        ),
      );
    }
    const applied = this.apply(command, 'agent');
    if (!applied.ok) return Promise.resolve(this.refusal(applied.error, applied.message));
    const revision = applied.state.revision;
    const cart = cartView(applied.state);
    const outcome = this.waitForCommit(revision).then((seen): AgentOutcome =>
      seen
        ? { ok: true, revision, committed: true, operationId: operationId ?? null, command, cart }
        : this.refusal('commit_not_observed', `Revision ${revision} was applied but the page did not commit it within ${COMMIT_TIMEOUT_MS} ms.`),
    );
    if (operationId !== undefined) this.operations.set(operationId, { fingerprint: commandFingerprint(command), outcome });
    return outcome;
  }

  refusal(error: Extract<AgentOutcome, { ok: false }>['error'], message: string, extra: Partial<Extract<AgentOutcome, { ok: false }>> = {}): AgentOutcome {
    return { ok: false, error, message, currentRevision: this.state.revision, ...extra };
  }

  private apply(command: Command, actor: Actor) {
    const result = applyCommand(this.state, command);
    if (result.ok) {
      this.state = result.state;
      const verb = command.kind === 'add' ? `added ${command.quantity} × ${command.productId}` : `set ${command.productId} to ${command.quantity}`;
      this.log(actor, verb);
    }
    return result;
  }

  private log(actor: Actor, text: string): void {
    this.activity = [{ seq: ++this.seq, actor, text, revision: this.state.revision }, ...this.activity].slice(0, 20);
    for (const l of [...this.listeners]) l();
  }

  private waitForCommit(revision: number): Promise<boolean> {
    if (this.committed >= revision) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = { revision, resolve };
      this.waiters.push(waiter);
      setTimeout(() => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) {
          this.waiters.splice(i, 1);
          resolve(false);
        }
      }, COMMIT_TIMEOUT_MS);
    });
  }
}
