/**
 * An in-test ExtensionLink for UNIT tests of the broker's logic (the real link
 * is covered end to end): it answers list-tabs and discover from tables, and
 * dispatch (WebMCP invocations) through a replaceable handler; it records every request and grant.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { descriptorHash, urlHash } from '../../src/shared/canonical';
import { nodeSha256 } from '../../src/main/core/digest';
import type { LinkStatus } from '../../src/shared/ipc';
import type { ConsoleRequest, ConsoleRequestValue, ExtensionEvent } from '../../src/shared/protocol';
import { err, ok, type Result } from '../../src/shared/result';
import type { DiscoveryResult, Grant, InvocationResult, SharedTab, ToolAnnotations, ToolDescriptor } from '../../src/shared/types';
import type { ExtensionLink } from '../../src/main/core/ports';
import { Broker, type ActionFaculty, type ActionRequestBase } from '../../src/main/core/broker';
import { Ledger } from '../../src/main/core/ledger';
import type { Receipt } from '../../src/shared/receipt';

export type InvokeReq = Extract<ConsoleRequest, { op: 'dispatch' }>;
export type InvokeHandler = (req: InvokeReq, signal?: AbortSignal) => Promise<Result<InvocationResult>>;

export const ORIGIN = 'http://127.0.0.1:8765';

export class FakeLink implements ExtensionLink {
  state: LinkStatus['state'] = 'connected';
  tabs: SharedTab[] = [];
  /** Open tabs that are not shared (yet): listed by list-shareable-tabs, shared by share-tab as they are. */
  shareable: SharedTab[] = [];
  discoveries = new Map<number, DiscoveryResult>();
  requests: ConsoleRequest[] = [];
  grants: Grant[] = [];
  signFails = false;
  /** Error codes the next console-state requests are answered with, one each (then ok). */
  consoleStateErrors: string[] = [];
  /** requestIds (grant) of invoke requests whose signal was aborted. */
  aborted: string[] = [];
  invokeHandler: InvokeHandler = async () => ok({ outcome: 'succeeded', result: '{"ok":true}', elapsedMs: 3 });
  /** Answers of read faculties (`{op:'read'}`) by faculty name; unknown faculties answer `unknown-faculty`. */
  reads = new Map<string, (r: Extract<ConsoleRequest, { op: 'read' }>) => Result<unknown>>();
  private readonly eventListeners = new Set<(e: ExtensionEvent) => void>();
  private readonly statusListeners = new Set<(s: LinkStatus) => void>();
  /** Resolvers for tests that wait until an invoke reaches the link. */
  private invokeWaiters: Array<(r: InvokeReq) => void> = [];

  async request<K extends ConsoleRequest['op']>(
    req: Extract<ConsoleRequest, { op: K }>,
    opts?: { signal?: AbortSignal; timeoutMs?: number },
  ): Promise<Result<ConsoleRequestValue[K]>> {
    const r = req as ConsoleRequest;
    this.requests.push(structuredClone(r));
    const out = await this.answer(r, opts?.signal);
    return out as Result<ConsoleRequestValue[K]>;
  }

  private async answer(r: ConsoleRequest, signal?: AbortSignal): Promise<Result<unknown>> {
    if (this.state !== 'connected') return err('link-down', 'not connected');
    switch (r.op) {
      case 'list-tabs':
        return ok(this.tabs);
      case 'discover': {
        const d = this.discoveries.get(r.tabId);
        return d ? ok(structuredClone(d)) : err('tab-not-shared', `tab ${r.tabId} is not shared`);
      }
      case 'dispatch': {
        for (const w of this.invokeWaiters.splice(0)) w(r);
        if (signal?.aborted) return err('aborted', 'aborted');
        // Like the bridge: an abort answers `aborted` and asks the extension to cancel.
        const abort = new Promise<Result<InvocationResult>>((resolve) =>
          signal?.addEventListener(
            'abort',
            () => {
              this.aborted.push(r.grant.requestId);
              resolve(err('aborted', 'aborted'));
            },
            { once: true },
          ),
        );
        return Promise.race([this.invokeHandler(r, signal), abort]);
      }
      case 'cancel':
        return ok({ cancelled: true });
      case 'read': {
        const answer = this.reads.get(r.faculty);
        return answer ? answer(r) : err('unknown-faculty', `no faculty ${r.faculty}`);
      }
      case 'list-shareable-tabs':
        return ok([...this.tabs, ...this.shareable.filter((s) => !this.tabs.some((t) => t.tabId === s.tabId))]);
      case 'share-tab': {
        const open = this.shareable.find((s) => s.tabId === r.tabId);
        const t = open ? { ...open, sharedAt: Date.now() } : sharedTab(r.tabId);
        this.tabs = [...this.tabs.filter((x) => x.tabId !== r.tabId), t];
        return ok(t);
      }
      case 'unshare-tab':
        this.tabs = this.tabs.filter((x) => x.tabId !== r.tabId);
        return ok(null);
      case 'reload-tab':
        return this.tabs.some((t) => t.tabId === r.tabId) ? ok(null) : err('tab-not-shared', `tab ${r.tabId} is not shared`);
      case 'console-state': {
        const code = this.consoleStateErrors.shift();
        return code ? err(code, `console-state not taken (${code})`) : ok(null);
      }
      default:
        return err('unsupported', (r as { op: string }).op);
    }
  }

  /** Resolves with the next invoke request that reaches the link. */
  nextInvoke(): Promise<InvokeReq> {
    return new Promise((resolve) => this.invokeWaiters.push(resolve));
  }

  onEvent(listener: (e: ExtensionEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  emit(e: ExtensionEvent): void {
    for (const l of this.eventListeners) l(e);
  }

  /** Change the link state and tell the status listeners. */
  setState(state: LinkStatus['state']): void {
    this.state = state;
    for (const l of this.statusListeners) l(this.status());
  }

  status(): LinkStatus {
    return { state: this.state, paired: true };
  }

  onStatus(listener: (s: LinkStatus) => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  async signGrant(fields: Omit<Grant, 'mac'>): Promise<Result<Grant>> {
    if (this.signFails) return err('not-paired', 'no pairing key');
    const g = { ...fields, mac: 'f'.repeat(64) };
    this.grants.push(g);
    return ok(g);
  }

  async confirmPairing(): Promise<Result<null>> {
    return ok(null);
  }

  async unpair(): Promise<Result<null>> {
    return ok(null);
  }

  invokes(): InvokeReq[] {
    return this.requests.filter((r): r is InvokeReq => r.op === 'dispatch');
  }
}

export interface ToolSpec {
  name: string;
  inputSchema?: unknown;
  annotations?: ToolAnnotations;
  title?: string;
  description?: string;
  frameId?: number;
  blocked?: ToolDescriptor['blocked'];
  /** `declarative`: a `<form toolname>` (its form is read through `webmcp-discover`/`form`). Default imperative. */
  kind?: ToolDescriptor['kind'];
}

/** A discovery of `tabId` with real descriptor hashes. */
export async function makeDiscovery(tabId: number, specs: ToolSpec[], documentId = 'doc-1'): Promise<DiscoveryResult> {
  const tools: ToolDescriptor[] = [];
  for (const s of specs) {
    const fields = { name: s.name, title: s.title ?? '', description: s.description ?? `${s.name} tool`, inputSchema: s.inputSchema ?? {}, origin: ORIGIN, annotations: s.annotations };
    tools.push({
      ...fields,
      ...(s.annotations ? { annotations: s.annotations } : { annotations: undefined }),
      descriptorHash: await descriptorHash(fields, nodeSha256),
      tabId,
      frameId: s.frameId ?? 0,
      documentId,
      frameUrl: `${ORIGIN}/shop`,
      urlHash: await urlHash(`${ORIGIN}/shop`, `${ORIGIN}/shop`, nodeSha256),
      kind: s.kind ?? 'imperative',
      ...(s.blocked ? { blocked: s.blocked } : {}),
    });
  }
  return {
    tabId,
    origin: ORIGIN,
    url: `${ORIGIN}/shop`,
    documentId,
    support: { modelContext: true, legacyApi: null, argumentForm: 'object' },
    tools,
    violations: [],
  };
}

export function sharedTab(tabId: number, documentId = 'doc-1'): SharedTab {
  return { tabId, windowId: 1, title: `Tab ${tabId}`, url: `${ORIGIN}/shop`, origin: ORIGIN, documentId, sharedAt: Date.now() };
}

/** A real Ledger in a temp dir. */
export function tempLedger(): { ledger: Ledger; dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'echo-broker-'));
  const ledger = new Ledger(join(dir, 'ledger.db'));
  return {
    ledger,
    dir,
    cleanup: () => {
      ledger.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The receipts of one request, oldest first. */
export function trailOf(ledger: Ledger, requestId: string): Receipt[] {
  return ledger.query({ requestId, limit: 500 }).receipts.reverse();
}

/** Resolves when `predicate` holds, checked on every change the broker emits (no sleeps). */
/**
 * A receipt sink over `ledger` that logs each append and marks it on disk when a
 * `durable()` that began after it resolves (what Ledger.durable promises);
 * `notDurable()`: the events appended and not yet covered. `failDurable` makes
 * every later `durable()` reject, as a failed fsync does.
 */
export function durabilitySpy(ledger: Ledger): {
  sink: { append: Ledger['append']; durable: () => Promise<void>; query: Ledger['query'] };
  log: Array<{ event: string; durable: boolean }>;
  notDurable: () => string[];
  failDurable: () => void;
} {
  const log: Array<{ event: string; durable: boolean }> = [];
  let failing = false;
  const sink = {
    append: (input: Parameters<Ledger['append']>[0]) => {
      const r = ledger.append(input);
      log.push({ event: input.event, durable: false });
      return r;
    },
    durable: async () => {
      const covered = log.length;
      if (failing) throw new Error('EIO: i/o error, fsync');
      await ledger.durable();
      for (const e of log.slice(0, covered)) e.durable = true;
    },
    query: (q: Parameters<Ledger['query']>[0]) => ledger.query(q),
  };
  return { sink, log, notDurable: () => log.filter((e) => !e.durable).map((e) => e.event), failDurable: () => (failing = true) };
}

export function until(subscribe: (l: () => void) => () => void, predicate: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (predicate()) return resolve();
    const off = subscribe(() => {
      if (predicate()) {
        off();
        resolve();
      }
    });
  });
}

/** The request of `standInHover`: a target ref, as issue 10's semantic controls will take. */
export interface HoverRequest extends ActionRequestBase {
  ref: string;
}

/**
 * A stand-in low-impact faculty (`semantic` / `hover`) for tests of the pipeline
 * with a faculty other than WebMCP: its target is the shared tab as reported,
 * its subject a fixed fingerprint (what a hover will bind), its look `page_snapshot`.
 */
export const standInHover: ActionFaculty<HoverRequest> = {
  faculty: 'semantic',
  operation: 'hover',
  agentTool: 'page_hover',
  verb: 'hover over an element',
  initialFields: (r) => ({ tabId: r.tabId }),
  resolveSubject: (r, env) => {
    const tab = env.sharing.get(r.tabId);
    if (!tab) return err('tab-not-shared', 'not shared');
    const H = (c: string) => c.repeat(64);
    return ok({
      target: { tabId: r.tabId, frameId: 0, documentId: tab.documentId, origin: tab.origin, urlHash: H('1'), tabUrl: tab.url, frameUrl: tab.url },
      subjectHash: H('a'),
      subjectKey: H('a'),
      subject: { type: 'webmcp-tool', toolName: r.ref, title: '', description: '', inputSchema: {}, descriptorHash: H('a'), toolKind: 'imperative' },
      linkSubject: { ref: r.ref },
      receiptFields: {},
      policy: {},
    });
  },
  validate: () => ok({}),
  lookAgain: (tabId) => `call page_snapshot {"tabId": ${tabId}} again`,
};

/**
 * A Broker over `link` and a fresh temp ledger that has listed the tabs and discovered tab 7 as
 * an agent would; `close()` disposes the broker and removes the ledger.
 */
export async function discoveredBroker(link: FakeLink): Promise<{ broker: Broker; ledger: Ledger; close(): void }> {
  const { ledger, cleanup } = tempLedger();
  const broker = new Broker({ link, receipts: ledger, approvalTimeoutMs: () => 60_000, linkGraceMs: 200 });
  const reader = { actor: { kind: 'agent' as const, name: 'fixture' }, kind: 'read' as const };
  await broker.listTabs(reader);
  const d = await broker.discover({ tabId: 7 }, reader);
  if (!d.ok) throw new Error(`discovery failed: ${d.error.message}`);
  return {
    broker,
    ledger,
    close() {
      broker.dispose();
      cleanup();
    },
  };
}
