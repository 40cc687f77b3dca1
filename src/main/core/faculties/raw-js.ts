/**
 * The console side of raw JavaScript (faculty `raw-js`, operation `run`; issue 11 item 3;
 * src/shared/raw-script.ts; docs/raw-javascript.md), and the live record of every run
 * (`ScriptRuns`) that the developer console shows.
 *
 *  - Only while developer mode is on (../developer-mode.ts): `page_run_script` exists in the agent's
 *    tools/list only then, and a run that starts while it is off is refused (`developer-mode-off`)
 *    with a receipt. Each run re-arms the idle timer (`touch`).
 *  - The subject is the code: subject hash = SHA-256 of its exact UTF-8 bytes (the grant binds it
 *    with faculty, operation, tab, frame, document, URL hash and the arguments hash of `{code, world}`).
 *    Its mutation kind means every agent run is shown to the person (the policy floor; no rule allows
 *    it, docs/broker.md): the same code twice is two approvals; there is no "always allow".
 *  - The target is the frame's document as it is now (`locate` with no document id): the dialog shows
 *    the URL the grant binds; a frame not at the shared origin is refused (`navigated`).
 *  - The person's developer-console line (`ConsoleApi.runConsoleLine`) runs through the same pipeline
 *    with the person as actor and no dialog (AgentContext.byPerson: their Enter is the decision, gated
 *    by the trusted-input gate's `developer-console-line`).
 *  - After dispatch the wait is RAW_SCRIPT_TIMEOUT_MS; past it, or after Stop, the outcome is unknown
 *    (page code cannot be interrupted) and the run offers a reload of the tab.
 */
import { randomBytes } from 'node:crypto';
import { fingerprint } from '../../../shared/canonical';
import type { RawScriptSubject } from '../../../shared/ipc';
import { err, ok, type Result } from '../../../shared/result';
import { RAW_SCRIPT_TIMEOUT_MS, scriptArgumentsProblem, scriptHash, scriptOutputOf, type RawScriptWorld, type ScriptRun } from '../../../shared/raw-script';
import { redactText } from '../../../shared/redact';
import { nodeSha256 } from '../digest';
import type { Broker } from '../broker';
import type { BrokerAnswer } from '../broker/trail';
import { tabIdFields, type ActionFaculty, type ActionRequestBase, type ActionValue, type AgentContext, type ResolvedAction } from '../broker/faculty';
import { snapshotAgain } from './semantic';

/** A run as the agent (or the person) asks it; `arguments` is `{code, world}`. */
export interface ScriptRequest extends ActionRequestBase {
  tabId: number;
  frameId?: number;
}

/** The `run` operation of faculty `raw-js`. */
export const rawJsFaculty: ActionFaculty<ScriptRequest> = {
  faculty: 'raw-js',
  operation: 'run',
  agentTool: 'page_run_script',
  verb: 'run its own JavaScript in the page (raw JavaScript, developer mode)',
  initialFields: tabIdFields,
  dispatchTimeoutMs: RAW_SCRIPT_TIMEOUT_MS,
  async resolveSubject(req, env, signal): Promise<Result<ResolvedAction>> {
    const problem = scriptArgumentsProblem(req.arguments);
    if (problem !== null) return err('invalid-arguments', `page_run_script: ${problem}. Nothing was asked or done.`);
    const { code, world } = req.arguments as { code: string; world: RawScriptWorld };
    const shared = env.sharing.get(req.tabId);
    if (!shared) return err('tab-not-shared', `Tab ${req.tabId} is not shared with the agent; nothing was done.`);
    const frameId = req.frameId ?? 0;
    const loc = await env.locate(req.tabId, frameId, null, signal);
    if (!loc.ok) {
      if (loc.error.code === 'navigated') return err('navigated', `Frame ${frameId} of tab ${req.tabId} is not a document at the shared origin ${shared.origin} (or cannot be reached); nothing was done.`);
      return err(loc.error.code, `The frame could not be reached (${loc.error.message}); nothing was done.`);
    }
    const codeHash = await scriptHash(code, nodeSha256);
    const subject: RawScriptSubject = { type: 'raw-script', operation: 'run', code, codeHash, world, timeoutMs: RAW_SCRIPT_TIMEOUT_MS };
    const l = loc.value;
    return ok({
      target: { tabId: req.tabId, frameId, documentId: l.documentId, origin: shared.origin, urlHash: l.urlHash, tabUrl: l.tabUrl, frameUrl: l.frameUrl },
      subjectHash: codeHash,
      subjectKey: codeHash,
      subject,
      linkSubject: { codeHash },
      receiptFields: { origin: shared.origin, frameId, documentId: l.documentId },
      policy: {},
    });
  },
  validate(r, args) {
    const problem = scriptArgumentsProblem(args);
    if (problem !== null) return err('invalid-arguments', `page_run_script: ${problem}.`);
    const s = r.subject as RawScriptSubject;
    // The receipt names the script by its hash and fingerprint, never by its text.
    return ok({ world: s.world, codeHash: s.codeHash, codeFingerprint: fingerprint(s.codeHash), codeBytes: Buffer.byteLength(s.code, 'utf8') });
  },
  lookAgain: snapshotAgain,
};

/** The developer mode a run needs (../developer-mode.ts). */
export interface DeveloperModeGate {
  readonly on: boolean;
  touch(): void;
}

/** Runs kept for the console UI (oldest dropped first). */
export const MAX_SCRIPT_RUNS = 50;

/** Every raw-JavaScript run of this console, in memory only, with Stop; the developer console's live feed. */
export class ScriptRuns {
  private readonly runs = new Map<string, ScriptRun>();
  private readonly stops = new Map<string, AbortController>();
  /** The pipeline's request id of each run in flight (known once the pipeline has one): Stop goes through Broker.inFlight. */
  private readonly requestIds = new Map<string, string>();
  private readonly listeners = new Set<(run: ScriptRun) => void>();
  private devMode: DeveloperModeGate | null = null;

  constructor(private readonly broker: Pick<Broker, 'action' | 'rejectCall' | 'inFlight' | 'approvals'>) {}

  /**
   * Developer mode went off (the person's switch, or its idle timeout): every agent run still
   * waiting for the person is refused at once (`developer-mode-off`, its dialog gone), and a run
   * approved but not yet dispatched is refused by the pipeline's last check (`refusedNow`). Stop
   * everything (why `stop`) denies the pending ones itself, right after switching it off.
   */
  developerModeOff(why: 'person' | 'idle-timeout' | 'stop'): void {
    if (why === 'stop') return;
    for (const v of this.broker.approvals.list()) {
      if (v.faculty === 'raw-js') this.broker.approvals.refuse(v.requestId, 'developer-mode-off', 'developer mode was switched off while it waited');
    }
  }

  /** The developer mode whose state every run checks (the core sets it once it exists). */
  useDeveloperMode(d: DeveloperModeGate): void {
    this.devMode = d;
  }

  /** The runs kept, oldest first (copies). */
  list(): ScriptRun[] {
    return [...this.runs.values()].map((r) => structuredClone(r));
  }

  /** Called with the run after each change (started, ended, stopped); returns the unsubscribe. */
  onChange(listener: (run: ScriptRun) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Run `code` in a shared tab as `ctx.actor` (the agent's page_run_script, or the person's line
   * with `ctx.byPerson`). Refused with a receipt while developer mode is off. Never throws.
   * @returns the pipeline's answer and the run as it ended.
   */
  async run(req: { tabId: number; frameId?: number; code: string; world: RawScriptWorld; operationId?: string }, ctx: AgentContext): Promise<{ answer: BrokerAnswer<ActionValue>; run: ScriptRun }> {
    const runId = `run_${randomBytes(8).toString('hex')}`;
    const codeHash = await scriptHash(req.code, nodeSha256);
    const run: ScriptRun = {
      runId, requestId: null, actor: ctx.actor.kind === 'person' ? 'person' : 'agent', ...(ctx.actor.kind === 'agent' && ctx.actor.name ? { agentName: ctx.actor.name } : {}),
      tabId: req.tabId, frameId: req.frameId ?? 0, world: req.world, code: req.code, codeHash, status: 'running', startedAt: Date.now(), endedAt: null, output: null, error: null, offerReload: false,
    };
    if (!this.devMode?.on) {
      const answer = this.broker.rejectCall({
        faculty: 'raw-js', agentTool: ctx.byPerson ? 'developer-console' : 'page_run_script', actor: ctx.actor, code: 'developer-mode-off',
        message: 'Raw JavaScript runs only while the person has developer mode on in the console, and it is off now; nothing was done.',
      });
      return { answer, run: this.end({ ...run, requestId: answer.requestId || null }, { status: 'refused', error: { code: answer.error.code, message: answer.error.message } }) };
    }
    this.devMode.touch();
    const stop = new AbortController();
    const onAgentAbort = () => stop.abort();
    ctx.signal?.addEventListener('abort', onAgentAbort, { once: true });
    this.keep(run);
    this.stops.set(runId, stop);
    try {
      // Developer mode must still be on when the person is asked and right before the dispatch,
      // not only now: a run waiting for approval when it goes off never reaches the page.
      const faculty: ActionFaculty<ScriptRequest> = {
        ...rawJsFaculty,
        refusedNow: () => (this.devMode?.on ? null : { code: 'developer-mode-off', message: 'Developer mode was switched off while this run waited; raw JavaScript runs only while it is on.' }),
      };
      const answer = await this.broker.action(
        faculty,
        { tabId: req.tabId, ...(req.frameId !== undefined ? { frameId: req.frameId } : {}), arguments: { code: req.code, world: req.world }, ...(req.operationId ? { operationId: req.operationId } : {}) },
        {
          ...ctx,
          signal: stop.signal,
          onRequest: (id) => {
            this.requestIds.set(runId, id);
            ctx.onRequest?.(id);
          },
        },
      );
      this.devMode?.touch();
      const current = this.runs.get(runId) ?? run;
      const base = { ...current, requestId: answer.requestId || null };
      if (current.status === 'stopped') {
        // Stopped by the person: before the send it was cancelled (nothing ran, nothing to reload); after it, the outcome is unknown.
        const why = answer.ok ? null : { code: answer.error.code, message: redactText(answer.error.message).value.slice(0, 1000) };
        return { answer, run: this.end(base, { status: 'stopped', error: why, offerReload: why?.code !== 'cancelled' }) };
      }
      if (answer.ok) {
        const output = scriptOutputOf(answer.value.result);
        return { answer, run: this.end(base, output ? { status: 'succeeded', output } : { status: 'failed', error: { code: 'bad-answer', message: "The page's answer could not be read." } }) };
      }
      const e = { code: answer.error.code, message: redactText(answer.error.message).value.slice(0, 1000) };
      const status: ScriptRun['status'] = answer.error.code === 'outcome-unknown' ? 'outcome-unknown' : answer.error.code === 'failed' || answer.error.code === 'tool-failed' ? 'failed' : 'refused';
      return { answer, run: this.end(base, { status, error: e, offerReload: status === 'outcome-unknown' }) };
    } finally {
      ctx.signal?.removeEventListener('abort', onAgentAbort);
      this.stops.delete(runId);
      this.requestIds.delete(runId);
    }
  }

  /**
   * Stop waiting for a run (Ctrl+C in the developer console, Stop in the UI): its request is
   * aborted; once dispatched, the pipeline records `outcome-unknown` (the page may still be running
   * it) and the run offers a reload. Errors: `run-unknown` (ended, or never started).
   */
  stop(runId: string): Result<ScriptRun> {
    const ctl = this.stops.get(runId);
    const run = this.runs.get(runId);
    if (!ctl || !run || run.status !== 'running') return err('run-unknown', 'No running script has that id (it ended already, or never started).');
    // The person's Stop, as docs/stop.md asks of a faculty's own Stop: through the one registry, so the
    // request ends as any Stop does (before dispatch `cancelled`, after it `outcome-unknown`,
    // `stopped-by-person`; actor the person), not as the agent's own cancel.
    const requestId = this.requestIds.get(runId);
    if (requestId !== undefined) {
      const stopped = this.broker.inFlight.stop(requestId, 'stop');
      if (!stopped.ok && stopped.error.code !== 'already-stopped') return err('run-unknown', 'That run is ending already: its answer reached the console.');
      this.keep({ ...run, status: 'stopped', offerReload: true });
      return ok(structuredClone(this.runs.get(runId) as ScriptRun));
    }
    this.keep({ ...run, status: 'stopped', offerReload: true });
    ctl.abort();
    return ok(structuredClone(this.runs.get(runId) as ScriptRun));
  }

  private end(run: ScriptRun, change: Partial<ScriptRun>): ScriptRun {
    const done = { ...run, ...change, endedAt: Date.now() };
    this.keep(done);
    return structuredClone(done);
  }

  private keep(run: ScriptRun): void {
    this.runs.delete(run.runId);
    this.runs.set(run.runId, structuredClone(run));
    while (this.runs.size > MAX_SCRIPT_RUNS) this.runs.delete(this.runs.keys().next().value as string);
    for (const l of this.listeners) {
      try {
        l(structuredClone(run));
      } catch {
        /* a listener's failure is its own */
      }
    }
  }
}
