/**
 * Tests' side of the loopback web host's session (src/main/web/server.ts, issue 9
 * item 4): spend a one-time link token at `POST /session` the way the renderer
 * does (same Origin), and hand back the session id, its cookie and the socket URL.
 */
import { request } from 'node:http';
import { SESSION_PATH, TOKEN_FRAGMENT_KEY, WS_PATH } from '../../src/shared/web-wire';

/** What a `POST /session` answered. */
export interface ExchangeAnswer {
  status: number;
  /** The raw Set-Cookie headers (none unless 200). */
  setCookie: string[];
  body: string;
}

/** A session as a test client needs it. */
export interface WebSession {
  /** The session id. */
  sid: string;
  /** The `Cookie` header value (`echo-session-PORT=…`). */
  cookie: string;
  /** `ws://127.0.0.1:PORT/api/<sid>`. */
  wsUrl: string;
}

/** The token of a console URL (`…/#token=…`). */
export function tokenOf(consoleUrl: string): string {
  return new URLSearchParams(new URL(consoleUrl).hash.slice(1)).get(TOKEN_FRAGMENT_KEY) ?? '';
}

/**
 * POST a link token to the host's session endpoint.
 * @param headers extra or replacing headers (Origin defaults to the host's own; undefined removes one).
 */
export function exchangeLink(host: { port: number; origin: string }, body: string, headers: Record<string, string | undefined> = {}): Promise<ExchangeAnswer> {
  const all: Record<string, string> = { host: `127.0.0.1:${host.port}`, origin: host.origin, 'content-type': 'application/json' };
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) delete all[k];
    else all[k] = v;
  }
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: host.port, path: SESSION_PATH, method: 'POST', headers: all }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, setCookie: res.headers['set-cookie'] ?? [], body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A fresh session for a test client: mint a one-time link and spend it.
 * @throws when the host refuses the exchange.
 */
export async function webSession(host: { port: number; origin: string; newConsoleUrl(): string }): Promise<WebSession> {
  const r = await exchangeLink(host, JSON.stringify({ token: tokenOf(host.newConsoleUrl()) }));
  if (r.status !== 200 || !r.setCookie[0]) throw new Error(`session exchange refused: HTTP ${r.status} ${r.body}`);
  const sid = (JSON.parse(r.body) as { session: string }).session;
  return { sid, cookie: r.setCookie[0].split(';')[0]!, wsUrl: `ws://127.0.0.1:${host.port}${WS_PATH}/${sid}` };
}
