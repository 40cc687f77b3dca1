/**
 * Stop everything (issue 12 item 5, the kill switch; docs/stop.md): one act of
 * the person's, receipted as one (`stopped-everything`), that takes away every
 * power the agent has right now, in this order:
 *
 *  1. developer mode off (`DeveloperMode.switchOff('stop')`: its tools leave the
 *     agents' tools/list at once);
 *  2. every pending approval DENIED (reason: Stop everything), so nothing can be
 *     approved by a late click;
 *  3. every request still in flight stopped through the one registry every
 *     faculty's call registers with (Broker.inFlight, ./broker/in-flight.ts):
 *     before dispatch `cancelled`, after dispatch `outcome-unknown`;
 *  4. (a short, bounded wait for those requests' answers to leave, so their
 *     agents hear why, then) every agent MCP session closed — HTTP and stdio;
 *     the tokens stay valid (revoking one is a separate act);
 *  5. every shared tab unshared through the extension.
 *
 * Each request and each tab keeps its own receipts (`denied`, `cancelled`,
 * `outcome-unknown`, `tab-unshared`), as every request's trail ends with its own
 * outcome; the act itself is ONE receipt whose detail lists what it did. Nothing
 * here throws: a step that fails (the link is down, say) is named in the
 * report and the receipt, and the other steps still run.
 */
import type { StopEverythingReport } from '../../shared/ipc';
import type { Receipt, ReceiptInput } from '../../shared/receipt';
import type { AgentEndpoint } from './agent';
import type { Broker } from './broker';
import type { DeveloperMode } from './developer-mode';

/** How long Stop everything waits for stopped requests' answers to leave before it closes the sessions (ms). */
export const STOP_ANSWER_WAIT_MS = 1_500;

/** The parts Stop everything acts on. */
export interface StopParts {
  broker: Pick<Broker, 'approvals' | 'inFlight' | 'getSharedTabs' | 'sharing'>;
  agentEndpoint: Pick<AgentEndpoint, 'closeSessions'>;
  developerMode: Pick<DeveloperMode, 'on' | 'switchOff'>;
  /** Append a receipt; null when the ledger failed. */
  receipt(input: ReceiptInput): Receipt | null;
  /** How long to wait for the stopped requests' answers (ms, default STOP_ANSWER_WAIT_MS). */
  answerWaitMs?: number;
}

/** The reason a denied request's agent reads. */
export const STOP_EVERYTHING_DENIAL = 'The person pressed Stop everything.';

/**
 * Do Stop everything once (see the header). Never throws.
 * @returns what was done, with the id of its one receipt.
 */
export async function stopEverything(p: StopParts): Promise<StopEverythingReport> {
  const developerModeSwitchedOff = p.developerMode.on;
  p.developerMode.switchOff('stop');

  const denied: string[] = [];
  for (const a of p.broker.approvals.list()) {
    if (p.broker.approvals.decide(a.requestId, 'deny', STOP_EVERYTHING_DENIAL).ok) denied.push(a.requestId);
  }

  // The denied ones are ending already (their denial is their end); the rest are stopped.
  const stopped = p.broker.inFlight.stopAll('stop-everything', new Set(denied));
  // Denied requests end too; wait (bounded) for every one of them before the sessions go.
  await p.broker.inFlight.whenEnded([...denied, ...stopped.map((s) => s.requestId)], p.answerWaitMs ?? STOP_ANSWER_WAIT_MS);
  // One more pass of the event loop: the ended requests' MCP answers are written out.
  await new Promise<void>((resolve) => setImmediate(resolve));

  let sessionsClosed = 0;
  try {
    sessionsClosed = await p.agentEndpoint.closeSessions();
  } catch {
    /* closing is best effort; the count says what was closed */
  }

  const unshared: number[] = [];
  const unshareFailed: Array<{ tabId: number; code: string }> = [];
  await Promise.all(
    p.broker.getSharedTabs().map(async (t) => {
      const r = await p.broker.sharing.unshare(t.tabId);
      if (r.ok) unshared.push(t.tabId);
      else unshareFailed.push({ tabId: t.tabId, code: r.error.code });
    }),
  );
  unshared.sort((a, b) => a - b);

  const report: Omit<StopEverythingReport, 'receiptId'> = { denied, stopped, unshared, unshareFailed, sessionsClosed, developerModeSwitchedOff };
  const r = p.receipt({ requestId: null, event: 'stopped-everything', faculty: 'console', actor: { kind: 'person' }, detail: { ...report } });
  return { ...report, receiptId: r?.id ?? '' };
}
