/**
 * The agent endpoint's HTTP relay: the Streamable HTTP listener on 127.0.0.1,
 * run in a worker thread of its own (./http-relay.worker.ts) so that the
 * parsing, the body reading and the answers of an agent flood never hold the
 * console's event loop, which the person's UI shares (issue 9 item 3).
 *
 * The relay decides nothing. For every HTTP request it sends the endpoint
 * (./endpoint.ts, on the main thread) the request's method, URL and headers;
 * the endpoint runs every gate (Origin, Host, path, token, rate limits) and
 * answers either with a refusal, which the relay writes, or by asking for the
 * body, which the relay reads (at most `max` bytes), recognises as a JSON-RPC
 * batch by its first character (the endpoint refuses a batch unread), else
 * hands over as text (the endpoint parses it: a structured clone of a parsed
 * value fails on deep nesting that JSON.parse accepts). An admitted request's answer comes back as a status, headers and
 * body chunks (an SSE stream stays open as long as the endpoint sends chunks).
 * So every check, receipt and quota stays where it was, in one place; what
 * leaves the main thread is only the bytes: the HTTP parser, the request and
 * response objects, the socket writes, and reading a 700 KB batch.
 *
 * The connection limits (../net-guard.ts) apply to this listener, in this
 * thread; their counters are mirrored in a SharedArrayBuffer for the endpoint.
 *
 * If no worker can start, `startRelay` runs the same relay in the calling
 * thread over a MessageChannel: slower under a flood, the same behaviour.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { guardConnections, type ConnectionLimits } from '../net-guard';

/** What the relay needs to start. */
export interface RelayConfig {
  /** TCP port on 127.0.0.1 (0: a free one). */
  port: number;
  connectionLimits?: Partial<ConnectionLimits>;
  /** Four Int32 slots: open, evicted, refused, timed out (net-guard's counters, mirrored). */
  counters: SharedArrayBuffer;
}

/** Request headers as the endpoint sees them: lower-case names, repeated values joined with ", ". */
export type RelayHeaders = Record<string, string>;

/** The body of a request, as read by the relay. */
export type RelayBody =
  | { ok: true; bytes: number; batch: true }
  | { ok: true; bytes: number; batch: false; text: string }
  | { ok: false; reason: 'too-large' | 'aborted'; bytes: number };

/** Relay → endpoint. */
export type FromRelay =
  | { t: 'listening'; port: number; address: string; family: string }
  | { t: 'listen-error'; code: string | undefined; message: string }
  | { t: 'request'; id: number; method: string; url: string; headers: RelayHeaders }
  | { t: 'body'; id: number; body: RelayBody }
  /** The client went away before the answer ended (the endpoint stops its stream). */
  | { t: 'gone'; id: number }
  | { t: 'stopped' };

/** Endpoint → relay. */
export type ToRelay =
  | { t: 'read'; id: number; max: number }
  /** The answer's head; `body` is the whole body, or absent when chunks follow (`stream`). */
  | { t: 'answer'; id: number; status: number; headers: Array<[string, string]>; body?: string; stream?: boolean }
  | { t: 'chunk'; id: number; data: Uint8Array }
  | { t: 'end'; id: number }
  | { t: 'stop' };

/** The slots of `RelayConfig.counters`. */
export const RELAY_COUNTER = { open: 0, evicted: 1, refused: 2, timedOut: 3 } as const;

/** Hop-by-hop headers (RFC 9110 §7.6.1) and the framing the relay's own HTTP layer owns. */
const NOT_RELAYED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'upgrade', 'proxy-connection', 'te', 'trailer']);

/**
 * Run the relay on `port` (the worker's parentPort, or one end of a MessageChannel):
 * listens, then reports `listening` or `listen-error`; on `stop` closes the listener
 * and every connection and reports `stopped`.
 */
export function runRelay(port: Pick<MessagePort, 'postMessage' | 'on'>, config: RelayConfig): void {
  const send = (m: FromRelay) => port.postMessage(m);
  const open = new Map<number, { req: IncomingMessage; res: ServerResponse }>();
  let nextId = 1;
  const counters = new Int32Array(config.counters);

  const http = createServer((req, res) => {
    const id = nextId++;
    open.set(id, { req, res });
    res.once('close', () => {
      if (!open.delete(id)) return;
      // Closed before the endpoint ended its answer: a client that left, or a stream it stopped.
      send({ t: 'gone', id });
    });
    send({ t: 'request', id, method: req.method ?? 'GET', url: req.url ?? '', headers: headersOf(req) });
  });
  guardConnections(http, config.connectionLimits, false, (k, v) => Atomics.store(counters, RELAY_COUNTER[k], v));

  port.on('message', (m: ToRelay) => {
    if (m.t === 'stop') {
      http.close(() => send({ t: 'stopped' }));
      http.closeAllConnections();
      return;
    }
    const r = open.get(m.id);
    if (!r) return;
    if (m.t === 'read') {
      void readBody(r.req, m.max).then((body) => send({ t: 'body', id: m.id, body }));
    } else if (m.t === 'answer') {
      r.res.statusCode = m.status;
      for (const [k, v] of m.headers) r.res.setHeader(k, v);
      if (m.stream) {
        r.res.flushHeaders();
        return;
      }
      open.delete(m.id);
      r.res.end(m.body ?? '');
    } else if (m.t === 'chunk') {
      r.res.write(m.data);
    } else if (m.t === 'end') {
      open.delete(m.id);
      r.res.end();
    }
  });

  http.once('error', (e: NodeJS.ErrnoException) => send({ t: 'listen-error', code: e.code, message: e.message }));
  http.listen(config.port, '127.0.0.1', () => {
    const a = http.address();
    send({ t: 'listening', port: a && typeof a === 'object' ? a.port : 0, address: a && typeof a === 'object' ? a.address : '', family: a && typeof a === 'object' ? a.family : '' });
  });
}

function headersOf(req: IncomingMessage): RelayHeaders {
  const h: RelayHeaders = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined || NOT_RELAYED.has(k)) continue;
    h[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return h;
}

/**
 * Read a request body of at most `max` bytes as UTF-8 text, except a JSON-RPC
 * batch (its first character other than JSON whitespace is `[`), which is
 * reported as `batch: true` and never decoded: the endpoint refuses it whole.
 */
export async function readBody(req: IncomingMessage, max: number): Promise<RelayBody> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > max) return { ok: false, reason: 'too-large', bytes: size };
      chunks.push(chunk as Buffer);
    }
  } catch {
    return { ok: false, reason: 'aborted', bytes: size };
  }
  const whole = Buffer.concat(chunks);
  let i = 0;
  while (i < whole.length && (whole[i] === 0x20 || whole[i] === 0x09 || whole[i] === 0x0a || whole[i] === 0x0d)) i++;
  if (whole[i] === 0x5b) return { ok: true, bytes: size, batch: true };
  return { ok: true, bytes: size, batch: false, text: whole.toString('utf8') };
}

/** Where the relay's worker comes from: a built JavaScript entry (the hosts' out/main/agent-relay.js), or null to run it in this thread. */
export type RelayWorkerEntry = URL | null;

/** A running relay, as the endpoint holds it. */
export interface RelayHandle {
  /** The port it listens on. */
  readonly port: number;
  /** The address it is bound to (`{ address: '127.0.0.1', family: 'IPv4', port }`). */
  readonly address: { address: string; family: string; port: number };
  /** Runs in a worker thread (false: in this thread, the fallback). */
  readonly inWorker: boolean;
  /** net-guard's counters (`RELAY_COUNTER` slots), kept current by the relay. */
  readonly counters: Int32Array;
  send(m: ToRelay): void;
  /** Close the listener and every connection; resolves when done. */
  stop(): Promise<void>;
}

/**
 * The worker entry when running from source (tsx, vitest): the TypeScript entry
 * next to this file, loaded through tsx's CommonJS hook (a worker does not
 * inherit the parent's loader). null in a build, where the host names its entry.
 */
function sourceEntrySource(): string | null {
  if (!import.meta.url.endsWith('.ts')) return null;
  const entry = fileURLToPath(new URL('./http-relay.worker.ts', import.meta.url));
  return `require('node:module').createRequire(${JSON.stringify(fileURLToPath(import.meta.url))})('tsx/cjs/api').require(${JSON.stringify(entry)}, __filename);`;
}

/**
 * Start the relay: in a worker thread (`entry`, or from source the TypeScript
 * entry), else, when none is given or it cannot start, in this thread.
 * `onMessage` gets every relay message after `listening`.
 * @throws the listen error (its `code`, e.g. EADDRINUSE) when the port cannot be bound.
 */
export async function startRelay(
  config: Omit<RelayConfig, 'counters'>,
  onMessage: (m: FromRelay) => void,
  entry: RelayWorkerEntry | undefined,
  onExit: (error: Error) => void,
): Promise<RelayHandle> {
  const counters = new SharedArrayBuffer(4 * Int32Array.BYTES_PER_ELEMENT);
  const full: RelayConfig = { ...config, counters };
  const source = entry === undefined ? sourceEntrySource() : null;
  if (entry || source) {
    let worker: Worker | null = null;
    try {
      worker = entry ? new Worker(entry, { workerData: full }) : new Worker(source!, { eval: true, workerData: full });
      return await attach(worker, full, onMessage, onExit);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE' || (e as { listenError?: boolean }).listenError) throw e;
      // The worker could not start (a missing or broken entry): the same relay in this thread.
    }
  }
  const { port1, port2 } = new MessageChannel();
  runRelay(port2, full);
  return attach(port1, full, onMessage, onExit, () => {
    port1.close();
    port2.close();
  });
}

async function attach(
  via: Worker | MessagePort,
  config: RelayConfig,
  onMessage: (m: FromRelay) => void,
  onExit: (error: Error) => void,
  closePorts?: () => void,
): Promise<RelayHandle> {
  const isWorker = via instanceof Worker;
  let stopping = false;
  let stopped: (() => void) | null = null;
  const address = await new Promise<{ address: string; family: string; port: number }>((resolve, reject) => {
    const first = (m: FromRelay) => {
      if (m.t === 'listening') {
        via.off('message', first);
        resolve({ address: m.address, family: m.family, port: m.port });
      } else if (m.t === 'listen-error') {
        via.off('message', first);
        const err = Object.assign(new Error(m.message), { code: m.code, listenError: true });
        if (isWorker) void via.terminate();
        else closePorts?.();
        reject(err);
      }
    };
    via.on('message', first);
    if (isWorker) {
      via.once('error', reject);
      via.once('exit', (code) => reject(new Error(`the relay worker exited (${code}) before listening`)));
    }
  });
  if (isWorker) {
    via.removeAllListeners('error').removeAllListeners('exit');
    via.on('error', (e) => (stopping ? undefined : onExit(e)));
    via.on('exit', (code) => {
      stopped?.();
      if (!stopping) onExit(new Error(`the relay worker exited (${code})`));
    });
    // The relay must not keep the process alive by itself: the endpoint's owner decides when it stops.
    via.unref();
  }
  via.on('message', (m: FromRelay) => {
    if (m.t === 'stopped') stopped?.();
    else onMessage(m);
  });
  return {
    port: address.port,
    address,
    inWorker: isWorker,
    counters: new Int32Array(config.counters),
    send: (m) => via.postMessage(m),
    stop: () =>
      new Promise<void>((resolve) => {
        if (stopping) return resolve();
        stopping = true;
        // A relay that does not answer within 2 s is ended anyway.
        const late = setTimeout(() => stopped?.(), 2_000);
        late.unref();
        stopped = () => {
          stopped = null;
          clearTimeout(late);
          if (isWorker) void via.terminate().then(() => resolve());
          else {
            closePorts?.();
            resolve();
          }
        };
        via.postMessage({ t: 'stop' } satisfies ToRelay);
      }),
  };
}
