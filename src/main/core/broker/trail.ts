/**
 * The receipt trail of one request: every step the pipeline takes appends one
 * receipt with the request's common fields (docs/design.md, "Request
 * lifecycle"), and every answer names the request and its last receipt.
 *
 * Before dispatch a receipt that cannot be written aborts the request
 * (`write` throws LedgerUnavailable: fail closed, nothing happens unrecorded);
 * after dispatch the agent still gets its answer (`tryWrite`).
 *
 * A write commits at once; it reaches the disk in the background. Before
 * anything leaves the console (a request to the extension, a dialog, the
 * answer) the pipeline awaits `settle()`, so every receipt written so far is on
 * disk first (docs/ledger.md, "Durability").
 */
import { randomUUID } from 'node:crypto';
import type { Actor, Faculty, Receipt, ReceiptEvent, ReceiptInput } from '../../../shared/receipt';
import { redactText } from '../../../shared/redact';
import { toErrorInfo, type Err, type ErrorInfo, type Result } from '../../../shared/result';
import type { ArgumentIssue } from './validator';
import type { Turns } from '../turns';

/** Where receipts go: the Ledger (src/main/core/ledger) satisfies this. */
export interface ReceiptSink {
  /** Append (commit) one receipt; may throw when the store is unavailable. */
  append(input: ReceiptInput): Receipt;
  /** Resolves when every receipt appended so far is on disk; rejects when that failed (Ledger.durable). */
  durable(): Promise<void>;
}

/**
 * A broker answer: a Result plus the request id and the id of the last receipt
 * written for it (empty only when even the first receipt could not be written).
 * On failure `error.detail` may carry `issues` (ArgumentIssue[]) or
 * `untrustedText` (page-provided text that must be labelled for the agent).
 */
export type BrokerAnswer<T> = Result<T> & { requestId: string; receiptId: string };

/**
 * What a refusal carries beside its message (src/main/core/agent/answers.ts
 * shows both to the agent inside an untrusted block): `issues`, ajv's failing
 * paths, whose messages quote the page's schema; `untrustedText`, other page
 * text (at most 1000 chars in the receipt).
 */
export interface RefusalDetail {
  issues?: ArgumentIssue[];
  /**
   * Set when `issues` are about the console's OWN schema of an agent tool (the
   * MCP endpoint's check): the console's words, shown plainly. Absent, issues
   * are taken as quoting a page's schema (fail closed: labelled untrusted).
   */
  issuesFromConsoleSchema?: true;
  untrustedText?: string;
}

/** The refusal detail a step's failure carries (`Err.error.detail`, typed `unknown`), keeping only the two known fields. */
export function refusalDetail(detail: unknown): RefusalDetail | undefined {
  if (!detail || typeof detail !== 'object') return undefined;
  const d = detail as { issues?: unknown; untrustedText?: unknown };
  const out: RefusalDetail = {
    ...(Array.isArray(d.issues) ? { issues: d.issues as ArgumentIssue[] } : {}),
    ...((d as { issuesFromConsoleSchema?: unknown }).issuesFromConsoleSchema === true ? { issuesFromConsoleSchema: true as const } : {}),
    ...(typeof d.untrustedText === 'string' ? { untrustedText: d.untrustedText } : {}),
  };
  return Object.keys(out).length ? out : undefined;
}

/** A broker answer that is a failure. */
export type BrokerFailure = Err & { requestId: string; receiptId: string };

/** What the agent is told when a receipt could not be written or made durable (`cause`: the ledger's error). */
export function ledgerUnavailableMessage(cause: unknown): string {
  return `The receipt ledger is unavailable (${cause instanceof Error ? cause.message : String(cause)}); nothing was done.`;
}

/** Thrown by `Trail.write` when a receipt cannot be written before dispatch (fail closed). */
export class LedgerUnavailable extends Error {
  readonly code = 'ledger-unavailable';
}

/** The receipt fields every receipt of one request shares (set as the pipeline learns them). */
export type TrailFields = Omit<ReceiptInput, 'event' | 'actor' | 'detail' | 'requestId' | 'faculty'>;

/** One request's receipts and answers. */
export class Trail {
  readonly requestId: string;
  readonly faculty: Faculty;
  private fields: TrailFields;
  private last = '';

  constructor(
    private readonly sink: ReceiptSink,
    faculty: Faculty,
    fields: Partial<TrailFields> = {},
    requestId: string = randomUUID(),
    /** When given, `settle` resumes on its own turn of the event loop (src/main/core/turns.ts). */
    private readonly turns?: Turns,
  ) {
    this.requestId = requestId;
    this.faculty = faculty;
    this.fields = {
      origin: null,
      tabId: null,
      frameId: null,
      documentId: null,
      toolName: null,
      descriptorHash: null,
      argumentsHash: null,
      operation: null,
      subjectHash: null,
      ...fields,
    };
  }

  /** The id of the last receipt written ('' before the first). */
  get lastReceiptId(): string {
    return this.last;
  }

  /** Set common fields for the receipts that follow (e.g. the resolved origin, frame and document). */
  set(fields: Partial<TrailFields>): void {
    this.fields = { ...this.fields, ...fields };
  }

  /** The common fields as they stand (copies). */
  get current(): TrailFields {
    return { ...this.fields };
  }

  /**
   * Append (commit) one receipt of this request; on disk once `settle()` resolves.
   * @throws LedgerUnavailable when the sink throws (before dispatch that aborts the request).
   */
  write(event: ReceiptEvent, actor: Actor, detail: Record<string, unknown>): Receipt {
    let r: Receipt;
    try {
      r = this.sink.append({ ...this.fields, requestId: this.requestId, faculty: this.faculty, event, actor, detail });
    } catch (e) {
      throw new LedgerUnavailable(ledgerUnavailableMessage(e));
    }
    this.last = r.id;
    return r;
  }

  /**
   * Wait until every receipt written so far (by any request) is on disk; the
   * pipeline calls it before each effect outside the console.
   * @throws LedgerUnavailable when the ledger could not make them durable (nothing further is done).
   */
  async settle(o: { turn?: boolean } = {}): Promise<void> {
    try {
      await this.sink.durable();
    } catch (e) {
      throw new LedgerUnavailable(ledgerUnavailableMessage(e));
    }
    // One fsync wakes every request that waited for it: they go on one per pass, the console's UI between them.
    // `turn: false` right before a send whose checks must not be separated from it by other requests' turns.
    if (o.turn !== false) await this.turns?.take();
  }

  /**
   * Settle before handing `answer` to the agent. After dispatch the answer still
   * goes out when the ledger failed (its health shows it); before, a failure
   * becomes `ledger-unavailable`.
   */
  async settled<T>(answer: BrokerAnswer<T>, afterDispatch: boolean): Promise<BrokerAnswer<T>> {
    try {
      await this.settle();
      return answer;
    } catch (e) {
      if (afterDispatch || !(e instanceof LedgerUnavailable)) return answer;
      return this.answer({ ok: false, error: { code: e.code, message: e.message } });
    }
  }

  /** After dispatch the answer must still reach the agent even if the ledger fails. */
  tryWrite(event: ReceiptEvent, actor: Actor, detail: Record<string, unknown>): void {
    try {
      this.write(event, actor, detail);
    } catch {
      /* reported by the ledger's own health check; the agent still gets its answer */
    }
  }

  /** Told once the request's final answer is made (its end is decided; the disk wait may follow). */
  private onAnswer: (() => void) | null = null;

  /** Call `f` when this request's answer is made (the pipeline: the request is no longer stoppable). */
  whenAnswered(f: () => void): void {
    this.onAnswer = f;
  }

  /** Wrap a Result as this request's answer. */
  answer<T>(r: Result<T>): BrokerAnswer<T> {
    try {
      this.onAnswer?.();
    } catch {
      /* the listener's failure is its own */
    }
    return { ...r, requestId: this.requestId, receiptId: this.last };
  }

  /** A `refused` receipt and the matching failure (message bounded in the receipt, whole for the agent). */
  refuse<T>(actor: Actor, code: string, message: string, extra?: RefusalDetail): BrokerAnswer<T> {
    const detail: RefusalDetail = {
      ...(extra?.issues ? { issues: extra.issues } : {}),
      ...(extra?.issuesFromConsoleSchema ? { issuesFromConsoleSchema: true as const } : {}),
      ...(extra?.untrustedText ? { untrustedText: extra.untrustedText.slice(0, 1000) } : {}),
    };
    this.write('refused', actor, { code, message: message.slice(0, 1000), ...detail });
    const error: ErrorInfo = { code, message, ...(Object.keys(detail).length ? { detail } : {}) };
    return this.answer({ ok: false, error });
  }

  /** A `cancelled` receipt: nothing was dispatched. */
  cancelled<T>(actor: Actor, reason: string): BrokerAnswer<T> {
    this.tryWrite('cancelled', actor, { reason });
    return this.answer({ ok: false, error: { code: 'cancelled', message: `Cancelled: ${reason}. Nothing was dispatched.` } });
  }

  /** A read the extension could not answer: `failed` (or `cancelled` when the agent aborted it). */
  readFailed<T>(actor: Actor, signal: AbortSignal | undefined, e: ErrorInfo): BrokerAnswer<T> {
    if (signal?.aborted || e.code === 'aborted') return this.cancelled(actor, 'the agent cancelled the read');
    const message = redactText(String(e.message)).value.slice(0, 500);
    this.tryWrite('failed', actor, { error: { code: e.code, message } });
    return this.answer({ ok: false, error: { code: e.code, message: `The extension could not answer (${e.code}): ${message}` } });
  }

  /** Anything thrown inside a step: `ledger-unavailable`, or `internal` with a `failed` receipt. */
  internal<T>(e: unknown): BrokerAnswer<T> {
    if (e instanceof LedgerUnavailable) return this.answer({ ok: false, error: { code: e.code, message: e.message } });
    const info = toErrorInfo(e);
    this.tryWrite('failed', { kind: 'console' }, { error: { code: 'internal', message: info.message.slice(0, 500) } });
    return this.answer({ ok: false, error: { code: 'internal', message: 'The console hit an internal error; nothing further was done.' } });
  }
}
