/**
 * The renderer's WebSocket transport to the loopback web host
 * (src/main/web/server.ts): the same `EchoApi` as the preload's `window.echo`,
 * carried as `{id, method, params}` → `{id, result}` plus pushed `{event}`.
 *
 * The socket opens `/api/<session id>`, where the browser sends the session
 * cookie (HttpOnly; set when the page spent its one-time link, ./token.ts), which
 * authenticates it; the first message is `{type:'hello'}` (the connection waits
 * for `ready`, the link's exchange). Calls made before the first connection wait
 * for the socket to open and go out right behind the hello, without waiting for
 * the `welcome`: the host reads a socket's messages in order and answers nothing
 * before the hello is accepted (src/main/web/server.ts), so the first screenful's
 * queries cost no extra round trip. A refused session (4401) answers them
 * `unauthorized`. A dropped socket reconnects by itself (1 s, 2 s, 4 s
 * ... up to 10 s) and never replays a call: calls in flight, and calls made
 * while it is reconnecting, answer `disconnected` at once (the console is gone;
 * making the person wait for a timeout tells them nothing). A refused token
 * (4401: no session) stops reconnecting. Error messages are sentences for people; they
 * never name API methods.
 */
import type { ConsoleEvent, EchoApi } from '../../shared/ipc';
import { err, type Result } from '../../shared/result';
import { WS_CLOSE, WS_PATH, type WsClientMessage, type WsServerMessage } from '../../shared/web-wire';

/** The transport's own state, shown in the connection panel. */
export type TransportState = 'connecting' | 'open' | 'reconnecting' | 'unauthorized';

export interface WsClient {
  api: EchoApi;
  state(): TransportState;
  /** Subscribe to transport state changes; returns the unsubscribe function. */
  onState(listener: (s: TransportState) => void): () => void;
  close(): void;
}

/**
 * The WebSocket surface used here: the browser's, or a test double (Node's `ws`).
 * Structural, so this module type-checks without the DOM library too.
 */
export interface WsLike {
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

export interface WsClientOptions {
  /** The page's own origin, e.g. `http://127.0.0.1:43117` (the socket goes to `ws://` + host + `/api`). */
  origin: string;
  /**
   * The session id (the socket opens `/api/<id>`, where the browser sends the session
   * cookie). Known now (a reload: the id is in the fragment): the socket is created at
   * once, in the same task. A promise (the one-time link's exchange): once it settles.
   * Null or absent: no session, the host answers 4401.
   */
  ready?: Promise<string | null> | string | null;
  /** Answer a call with `timeout` after this long (ms). */
  callTimeoutMs?: number;
  createSocket?: (url: string) => WsLike;
}

/** What the transport's own failures say (the UI shows them as they are). */
export const MESSAGES = {
  dropped: 'The connection to the console was lost before it answered, so it is not known whether this was done. Check again once it reconnects.',
  disconnected: 'The console is not reachable, so this was not done. Try again once the page has reconnected.',
  timeout: 'The console did not answer in time, so it is not known whether this was done. Check again in a moment.',
  unauthorized: 'The console refused this page’s session. A console link works once, in the browser that opened it first: open the console there, or restart it for a new link.',
} as const;

/** Open the WebSocket transport. */
export function createWsClient(opts: WsClientOptions): WsClient {
  const base = `${opts.origin.replace(/^http/, 'ws')}${WS_PATH}/`;
  let url = base;
  const callTimeoutMs = opts.callTimeoutMs ?? 30_000;
  const createSocket =
    opts.createSocket ?? ((u: string) => new (globalThis as unknown as { WebSocket: new (url: string) => WsLike }).WebSocket(u));
  const eventListeners = new Set<(e: ConsoleEvent) => void>();
  const stateListeners = new Set<(s: TransportState) => void>();
  const pending = new Map<number, (r: Result<unknown>) => void>();
  const waitingForOpen: Array<() => void> = [];
  let state: TransportState = 'connecting';
  let socket: WsLike | null = null;
  /** Whether the current socket is open and has sent its hello (calls may follow it). */
  let helloSent = false;
  let nextId = 1;
  let retryMs = 1_000;
  let closedByUs = false;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;

  const setState = (s: TransportState) => {
    if (s === state) return;
    state = s;
    // Calls still waiting for the first welcome answer now (`disconnected`), not after their timeout.
    if (s === 'reconnecting') for (const go of waitingForOpen.splice(0)) go();
    for (const l of stateListeners) l(s);
  };

  function connect(): void {
    if (closedByUs) return;
    const ws = createSocket(url);
    socket = ws;
    ws.onopen = () => {
      if (socket !== ws) return;
      ws.send(JSON.stringify({ type: 'hello' } satisfies WsClientMessage));
      helloSent = true;
      // The first connection's waiting calls follow the hello at once (see the file header).
      if (state === 'connecting') for (const go of waitingForOpen.splice(0)) go();
    };
    ws.onmessage = (ev) => {
      let msg: WsServerMessage;
      try {
        msg = JSON.parse(String(ev.data)) as WsServerMessage;
      } catch {
        return;
      }
      if ('type' in msg && msg.type === 'welcome') {
        retryMs = 1_000;
        setState('open');
        for (const go of waitingForOpen.splice(0)) go();
      } else if ('event' in msg) {
        for (const l of eventListeners) l(msg.event);
      } else if ('id' in msg) {
        const resolve = pending.get(msg.id);
        pending.delete(msg.id);
        resolve?.(msg.result);
      }
    };
    ws.onerror = () => undefined; // onclose follows
    ws.onclose = (ev) => {
      if (socket !== ws) return;
      socket = null;
      helloSent = false;
      // Refused at the door, or closed for a hello that came too late: the calls sent behind the
      // hello were never read (src/main/web/server.ts reads nothing once it has closed a socket).
      const refused = ev.code === WS_CLOSE.unauthorized && state === 'connecting';
      const message = ev.code === WS_CLOSE.helloTimeout ? MESSAGES.disconnected : MESSAGES.dropped;
      for (const resolve of pending.values()) resolve(refused ? err('unauthorized', MESSAGES.unauthorized) : err('disconnected', message));
      pending.clear();
      if (closedByUs) return;
      if (ev.code === WS_CLOSE.unauthorized) {
        setState('unauthorized');
        for (const go of waitingForOpen.splice(0)) go();
        return;
      }
      setState('reconnecting');
      retryTimer = setTimeout(connect, retryMs);
      retryMs = Math.min(retryMs * 2, 10_000);
    };
  }

  function call(method: string, params?: unknown): Promise<Result<never>> {
    return new Promise((resolve) => {
      let done = false;
      let id: number | undefined;
      const finish = (r: Result<unknown>) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (id !== undefined) pending.delete(id);
        resolve(r as Result<never>);
      };
      // One deadline covers waiting for the socket and waiting for the answer.
      const timer = setTimeout(() => finish(err('timeout', MESSAGES.timeout)), callTimeoutMs);
      const send = () => {
        if (done) return;
        if (closedByUs) return finish(err('disconnected', MESSAGES.disconnected));
        if (state === 'unauthorized') return finish(err('unauthorized', MESSAGES.unauthorized));
        const canSend = state === 'open' || (state === 'connecting' && helloSent);
        if (!canSend || !socket) return finish(err('disconnected', MESSAGES.disconnected));
        id = nextId++;
        pending.set(id, finish);
        const msg: WsClientMessage = params === undefined ? { id, method } : { id, method, params };
        socket.send(JSON.stringify(msg));
      };
      // Only the very first connection is waited for; while reconnecting the answer is `disconnected` at once.
      if (state === 'connecting' && !helloSent) waitingForOpen.push(send);
      else send();
    });
  }

  const api: EchoApi = {
    getSnapshot: () => call('getSnapshot'),
    decideApproval: (p) => call('decideApproval', p),
    queryReceipts: (p) => call('queryReceipts', p),
    verifyLedger: () => call('verifyLedger'),
    confirmPairing: (p) => call('confirmPairing', p),
    unpair: () => call('unpair'),
    listShareableTabs: () => call('listShareableTabs'),
    shareTab: (p) => call('shareTab', p),
    unshareTab: (p) => call('unshareTab', p),
    createAgentToken: (p) => call('createAgentToken', p),
    revokeAgentToken: (p) => call('revokeAgentToken', p),
    updateSettings: (p) => call('updateSettings', p),
    listPolicyRules: () => call('listPolicyRules'),
    addPolicyRule: (p) => call('addPolicyRule', p),
    removePolicyRule: (p) => call('removePolicyRule', p),
    getTargetPicture: (p) => call('getTargetPicture', p),
    listPatches: (p) => call('listPatches', p),
    revertPatches: (p) => call('revertPatches', p),
    inspectTab: (p) => call('inspectTab', p),
    invokeTool: (p) => call('invokeTool', p),
    queryRequests: (p) => call('queryRequests', p),
    countRequests: (p) => call('countRequests', p),
    startExport: (p) => call('startExport', p),
    cancelExport: (p) => call('cancelExport', p),
    runConsoleLine: (p) => call('runConsoleLine', p),
    stopScript: (p) => call('stopScript', p),
    listScriptRuns: () => call('listScriptRuns'),
    stopRequest: (p) => call('stopRequest', p),
    stopEverything: () => call('stopEverything'),
    reloadTab: (p) => call('reloadTab', p),
    onEvent(listener) {
      eventListeners.add(listener);
      return () => void eventListeners.delete(listener);
    },
  };

  if (opts.ready instanceof Promise) {
    void opts.ready.then(
      (sid) => {
        url = base + (sid ?? '');
        connect();
      },
      () => connect(),
    );
  } else {
    url = base + (opts.ready ?? '');
    connect();
  }
  return {
    api,
    state: () => state,
    onState(listener) {
      stateListeners.add(listener);
      return () => void stateListeners.delete(listener);
    },
    close() {
      closedByUs = true;
      clearTimeout(retryTimer);
      // Nothing more will be answered: the calls still waiting say so now, not at their timeout.
      for (const resolve of pending.values()) resolve(err('disconnected', MESSAGES.dropped));
      pending.clear();
      for (const go of waitingForOpen.splice(0)) go();
      socket?.close();
    },
  };
}
