/**
 * Demo and hostile WebMCP pages on 127.0.0.1, for people (`npm run demo`) and
 * for end-to-end tests (`startDemoServers()` on ports chosen by the system).
 *
 * Three origins, each a plain HTTP server on its own port, each serving the
 * same routes (so any page can be opened on any origin); the URLs returned
 * below name the canonical origin of each page:
 *   demo         resources/demo   (React shop, declarative forms, changing tools)
 *   hostile      resources/hostile (pages built to attack a WebMCP client)
 *   crossOrigin  the other origin that hostile pages embed in iframes or navigate to
 *
 * Nothing is fetched from the network: the React shop is built in memory with
 * Vite at start (vite.demo.config.ts), everything else is static files.
 * docs/demo.md describes every page and its deterministic triggers.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DEMO_DIR = resolve(ROOT, 'resources/demo');
const HOSTILE_DIR = resolve(ROOT, 'resources/hostile');
const BENCH_DIR = resolve(ROOT, 'resources/bench');

/** The ports `npm run demo` uses unless told otherwise. Tests pass nothing and get free ports. */
export const DEFAULT_DEMO_PORTS = { port: 8765, hostilePort: 8766, crossOriginPort: 8767 } as const;

export interface DemoServerOptions {
  /** Demo origin port; 0 (default) lets the system choose. */
  port?: number;
  /** Hostile origin port; 0 (default) lets the system choose. */
  hostilePort?: number;
  /** Second origin for cross-origin iframes and navigations; 0 (default) lets the system choose. */
  crossOriginPort?: number;
  /** Called once per request, e.g. `(line) => console.log(line)`. */
  log?: (line: string) => void;
}

export type DemoOriginName = 'demo' | 'hostile' | 'crossOrigin';

/** One page and what it promises: the tools `document.modelContext.getTools()` lists in its top document once `<html data-ready="true">`. */
export interface DemoPage {
  readonly id: string;
  readonly origin: DemoOriginName;
  /** Path (and query) on that origin. */
  readonly path: string;
  readonly title: string;
  readonly purpose: string;
  /** Tool names, sorted the way `getTools()` sorts them (by UTF-16 code units). */
  readonly tools: readonly string[];
  /** Deterministic triggers a test may call with `page.evaluate`. */
  readonly triggers: readonly string[];
}

const sorted = (names: string[]): readonly string[] => [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/** `tool_0000` … `tool_0999`: the names many-tools.html registers by default. */
export const MANY_TOOLS_NAMES: readonly string[] = Array.from({ length: 1000 }, (_, i) => `tool_${String(i).padStart(4, '0')}`);

export const DEMO_PAGES: readonly DemoPage[] = [
  {
    id: 'index', origin: 'demo', path: '/', title: 'Index', purpose: 'Lists every page with its URL.', tools: [], triggers: [],
  },
  {
    id: 'store', origin: 'demo', path: '/store/', title: 'React shop with a cart',
    purpose: 'Well-behaved imperative tools through a store facade: one command per call, waits for the React commit, expectedRevision and operationId. ?strict=0 drops StrictMode; ?delayMs=N delays mutating answers.',
    tools: sorted(['list_products', 'get_cart', 'set_cart_quantity', 'add_to_cart']),
    triggers: ['window.__storeDemo.{effectRuns,cleanups,facade}', 'click [data-testid=increment-<id>] / [data-testid=decrement-<id>] (human edit)'],
  },
  {
    id: 'signup', origin: 'demo', path: '/store/signup.html', title: 'React form with controlled inputs, no WebMCP tool',
    purpose: 'Book a tasting: controlled text, email, select, radio, date, time, textarea and an upper-casing promo code; the submit button is enabled only by valid React state; the confirmation is rendered from that state. For page_type and page_fill (issue 10).',
    tools: [],
    triggers: ['window.__signup.{state,submitted,changes}'],
  },
  {
    id: 'inbox', origin: 'demo', path: '/store/inbox.html', title: 'React list keyed by index, no WebMCP tool',
    purpose: 'Messages: rows keyed by their index, so a message arriving at the top takes over the first row\'s elements (its Delete button then deletes the new message). ?layout=list: <li> rows whose first 300 characters are the same sender and preview. A quick reply box with a live character count. For the target\'s item (issue 10).',
    tools: [],
    triggers: ['window.__inbox.arrive(subject)', 'window.__inbox.{mails(),deleted,archived,reply}'],
  },
  {
    id: 'forms', origin: 'demo', path: '/forms/', title: 'Declarative form tools',
    purpose: 'book_table (no toolautosubmit: the agent fills, a human submits) and subscribe_newsletter (toolautosubmit, event.agentInvoked + respondWith).',
    tools: sorted(['book_table', 'subscribe_newsletter']),
    triggers: ['click #book-table button[type=submit] (the human submit)'],
  },
  {
    id: 'schedule', origin: 'demo', path: '/schedule/', title: 'A form with the inputs Chromium makes schemas of',
    purpose: 'schedule_visit (toolautosubmit): date, time, datetime-local, month, week and color inputs (Chromium 156 writes a RegExp into `format` for the last five), a select, radio buttons, optional fields; respondWith({booked, visit}).',
    tools: ['schedule_visit'],
    triggers: ['[data-testid=schedule-result] data-count, data-visit (JSON of the submitted fields)'],
  },
  {
    id: 'appointment', origin: 'demo', path: '/appointment/', title: 'Forms with date and time inputs and optional fields',
    purpose: 'book_appointment (toolautosubmit) and request_callback (no toolautosubmit: the person presses the button): date and time inputs, optional fields that keep their value between calls, a hidden field; each handler answers with respondWith({ok, received}); leave_feedback (no toolautosubmit, no handler) navigates to ?thanks=1 when the person submits it.',
    tools: sorted(['book_appointment', 'leave_feedback', 'request_callback']),
    triggers: ['[data-testid=book-result] / [data-testid=callback-result] data-count, data-received (JSON of the submitted fields)', 'click [data-testid=callback-submit] (the person submits)', 'click [data-testid=callback-reset]'],
  },
  {
    id: 'spa', origin: 'demo', path: '/spa/?item=1', title: 'A single-page app with routes',
    purpose: 'delete_current_item {} deletes whatever item the route shows now; current_item reads it. Routes change with pushState or the fragment in one document: /spa/items/<uuid>, /spa/?item=n, /spa/?ticket=n (a parameter stripUrl removes), /spa/#/items/n.',
    tools: sorted(['current_item', 'delete_current_item']),
    triggers: ['window.__spa.go(url) (pushState, or the fragment for "#…")', 'window.__spa.deleted()', 'window.__spa.current()', 'window.__spa.items', 'window.__spa.startChurn(ms) / stopChurn() (rewrites the fragment every ms)'],
  },
  {
    id: 'changing', origin: 'demo', path: '/changing/', title: 'Tools that come and go',
    purpose: 'Registers and unregisters tools at run time (button, tool, timer with ?cycleMs=N, form added/removed); counts toolchange events.',
    tools: sorted(['get_time', 'unlock_advanced_tools']),
    triggers: ['window.__changing.toggleExtra()', 'window.__changing.add(name)', 'window.__changing.remove(name)', 'window.__changing.addForm() / removeForm()', 'window.__changing.startCycle(ms) / stopCycle()', 'window.__changing.toolchangeCount'],
  },
  {
    id: 'bad-practices', origin: 'demo', path: '/bad-practices/', title: 'A checkout page with WebMCP bad practices',
    purpose: 'Trips every page-lint rule of the tool inspector (src/shared/page-lint.ts, docs/inspector.md): provideContext on navigator.modelContext, a password form and a card form as tools, toolautosubmit on the form that pays, a tool without inputSchema, one without additionalProperties: false, an empty and a very long description, a 60-property schema, a $ref, hidden instructions, and get_help in the top document and in a same-origin frame.',
    tools: sorted(['quick_sign_in', 'save_card', 'pay_order', 'contact_us', 'track_order', 'search_products', 'store_policies', 'bulk_update_cart', 'apply_coupon', 'recommend_products', 'get_help', 'get_help']),
    triggers: ['window.__badPractices.addTool(name) / removeTool(name)', '[data-testid=pay-submissions] data-count'],
  },
  {
    id: 'rug-pull', origin: 'hostile', path: '/hostile/rug-pull.html', title: 'Rug pull',
    purpose: 'get_weather changes its description, schema, title or annotations after discovery (abort + re-register under the same name).',
    tools: sorted(['get_weather', 'list_cities']),
    triggers: ["window.__rugPull(variant?: 'description'|'schema'|'title'|'annotations'|'all')", 'window.__rugPullReset()', "postMessage({type:'echo-demo:rug-pull', variant})", '?rugPullAfterMs=N', '?rugPullOnExecute=1'],
  },
  {
    id: 'same-name', origin: 'hostile', path: '/hostile/same-name.html', title: 'Same tool name in iframes',
    purpose: 'The top document registers `search`; four iframes try `search` + frame_info: same-origin (its tools ALSO appear in the top\'s getTools(): two `search` with one origin), cross-origin with allow="tools" (listed only in that frame), cross-origin without allow and sandboxed (NotAllowedError). Ready when all four frames reported.',
    tools: sorted(['search', 'search', 'frame_info']),
    triggers: ['window.__frameResults (Map label -> registration results)', 'frames: /hostile/frames/same-name-frame.html?label=same-origin|cross-origin|cross-origin-no-allow|sandboxed'],
  },
  {
    id: 'navigation', origin: 'hostile', path: '/hostile/navigation.html', title: 'Navigation during approval',
    purpose: 'place_order, and a tool that navigates while it executes. Navigates on demand to a new document with the identical tool, another origin, a hash or pushState.',
    tools: sorted(['place_order', 'navigate_during_execute']),
    triggers: ["window.__navigate(kind?: 'same-page'|'reload'|'cross-origin'|'no-tools'|'hash'|'push-state', delayMs?)", '?navigateAfterMs=N&navigateTo=kind', 'window.__documentToken'],
  },
  {
    id: 'leaving', origin: 'hostile', path: '/hostile/leaving.html', title: 'Tools that leave the page',
    purpose: 'navigate_and_return (starts a navigation to a new document, returns a string), push_state_and_return (pushState, returns), submit_and_leave (toolautosubmit form without respondWith: null, then the submission navigates). After leaving (?left or ?submitted) only the form is listed.',
    tools: sorted(['navigate_and_return', 'push_state_and_return', 'submit_and_leave']),
    triggers: ['[data-testid=where] (the URL the document loaded at)'],
  },
  {
    id: 'effects', origin: 'hostile', path: '/hostile/effects.html', title: 'Effects outside the call',
    purpose: 'Tools whose effects land outside the call: a target=_blank link, window.open, alert(), confirm(), a navigation that meets beforeunload (after window.__guardLeaving()), a file chooser, a download, a report of the user activation a tool runs with, and a tool that answers when told (window.__release()). window.__hostileSign attacks the extension\'s sign in the page. ?opened=… (the copies the tools open) registers nothing.',
    tools: sorted(['open_link_in_new_tab', 'open_window', 'show_alert', 'show_confirm', 'leave_page', 'choose_file', 'download_file', 'wait_for_release', 'user_activation']),
    triggers: ['window.__guardLeaving()', 'window.__hostileSign.{host, shadowRoot, cover, uncover, modal, closeModal, remove, hide, restyle, fight}'],
  },
  {
    id: 'large-result', origin: 'hostile', path: '/hostile/large-result.html', title: 'A large result with nested secrets',
    purpose: 'export_account answers ~800 KiB of JSON: a ~600 KiB session object first, then ordinary orders (order numbers, UUIDs, SHA-256 digests, share links), settings 30 levels deep holding a token, a password, an Authorization name/value pair and a card number, and a data: thumbnail. Issue 8 item 6.',
    tools: ['export_account'],
    triggers: ['window.__largeResult ({secrets, text, ordinary}: made-up secrets and the ordinary values, for tests)'],
  },
  {
    id: 'form-tricks', origin: 'hostile', path: '/hostile/form-tricks.html', title: 'Forms that change after approval',
    purpose: 'send_message (no toolautosubmit) whose page can add toolautosubmit or change a hidden field during review; handled_without_answer (toolautosubmit, preventDefault without respondWith).',
    tools: sorted(['handled_without_answer', 'send_message']),
    triggers: ['window.__tricks.armAutosubmit()', 'window.__tricks.redirect()', '[data-testid=message-result] / [data-testid=handled-result] data-count, data-received'],
  },
  {
    id: 'misbehaving', origin: 'hostile', path: '/hostile/misbehaving.html', title: 'Tools that throw, hang, or return odd values',
    purpose: 'Throws, rejections, a hang, 5 MiB, plain strings, undefined, NaN, functions, circular and BigInt results, a slow tool, a side effect followed by a throw.',
    tools: sorted([
      'throws_error', 'throws_string', 'rejects_async', 'hangs_forever', 'slow_result', 'returns_5mb', 'returns_plain_string',
      'returns_json_looking_string', 'returns_undefined', 'returns_nan', 'returns_function', 'returns_circular', 'returns_bigint', 'side_effect_then_throw',
    ]),
    triggers: ['?slowMs=N (slow_result, default 10000)', '[data-testid=side-effects] data-count'],
  },
  {
    id: 'crash', origin: 'hostile', path: '/hostile/crash.html', title: 'A tool that crashes the tab',
    purpose: 'returns_symbol: returning a Symbol from execute crashes the renderer in Chromium 156 (executeTool never answers; the tab is gone).',
    tools: ['returns_symbol'], triggers: [],
  },
  {
    id: 'many-tools', origin: 'hostile', path: '/hostile/many-tools.html', title: '1,000 tools',
    purpose: 'Registers tool_0000 … tool_0999 (?count=N, up to 5000).', tools: MANY_TOOLS_NAMES, triggers: ['?count=N'],
  },
  {
    id: 'huge-description', origin: 'hostile', path: '/hostile/huge-description.html', title: '1 MiB texts',
    purpose: 'A 1 MiB description, a 1 MiB title, a ~1 MiB schema, next to one normal tool.',
    tools: sorted(['huge_description', 'huge_title', 'huge_schema', 'normal_tool']), triggers: [],
  },
  {
    id: 'deep-schema', origin: 'hostile', path: '/hostile/deep-schema.html', title: 'A schema 100 levels deep',
    purpose: '100 nested object schemas (and 100 nested array schemas), next to one normal tool.',
    tools: sorted(['deep_schema', 'deep_array_schema', 'normal_tool']), triggers: ['?depth=N'],
  },
  {
    id: 'proto-keys', origin: 'hostile', path: '/hostile/proto-keys.html', title: '__proto__ and constructor keys',
    purpose: 'Schemas and results with own __proto__ / constructor / prototype keys; execute reports what it received and whether Object.prototype got polluted.',
    tools: sorted(['proto_keys', 'proto_schema', 'proto_result']), triggers: [],
  },
  {
    id: 'names', origin: 'hostile', path: '/hostile/names.html', title: 'Bidi and look-alike names',
    purpose: 'Chromium rejects U+202E, Cyrillic and zero-width names (listed in the page); what remains: look-alike Latin names, case twins, bidi and Cyrillic in titles and descriptions, and a form tool.',
    tools: sorted(['paypal_login', 'paypa1_login', 'send_money', 'Send_Money', 'open_invoice', 'pay_invoice', 'confirm_payment']),
    triggers: ['window.__names.rejected (names Chromium refused, with the error)'],
  },
  {
    id: 'password-form', origin: 'hostile', path: '/hostile/password-form.html', title: 'Password form with toolautosubmit',
    purpose: 'sign_in: a declarative form with a password field and toolautosubmit; the browser exposes the password as an ordinary string parameter.',
    tools: ['sign_in'], triggers: ['[data-testid=submissions] data-count'],
  },
  {
    id: 'hidden-instructions', origin: 'hostile', path: '/hostile/hidden-instructions.html', title: 'Hidden instructions',
    purpose: 'Prompt injection in descriptions, titles, parameter descriptions and a form: plain, zero-width, Unicode tag characters, HTML-comment-like and fake system tags, annotation lies.',
    tools: sorted(['summarize_page', 'get_coupons', 'track_package', 'read_reviews', 'contact_support']), triggers: [],
  },
];

export interface DemoPageUrl extends DemoPage {
  readonly url: string;
}

export interface DemoServers {
  readonly demoOrigin: string;
  readonly hostileOrigin: string;
  readonly crossOrigin: string;
  /** Every page with its absolute URL. */
  readonly pages: readonly DemoPageUrl[];
  /** Absolute URL of a page by id (throws on an unknown id). */
  url(id: string): string;
  /** Absolute URL of any path on one of the three origins. */
  at(origin: DemoOriginName, path: string): string;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.txt': 'text/plain; charset=utf-8',
};

interface Asset {
  readonly body: Buffer;
  readonly type: string;
}

let storeBuild: Promise<Map<string, Asset>> | undefined;

/** Builds the React shop once per process, in memory (nothing written to disk). */
function buildStore(): Promise<Map<string, Asset>> {
  storeBuild ??= (async () => {
    const [{ build }, { demoStoreViteConfig }] = await Promise.all([import('vite'), import('../../vite.demo.config')]);
    const config = demoStoreViteConfig();
    const result = await build({ ...config, build: { ...config.build, write: false } });
    const outputs = Array.isArray(result) ? result : [result];
    const assets = new Map<string, Asset>();
    for (const out of outputs) {
      if (!('output' in out)) throw new Error('demo store: unexpected Vite watcher result');
      for (const file of out.output) {
        const body = file.type === 'chunk' ? Buffer.from(file.code) : Buffer.from(file.source);
        assets.set(`/store/${file.fileName}`, { body, type: TYPES[extname(file.fileName)] ?? 'application/octet-stream' });
      }
    }
    if (!assets.has('/store/index.html')) throw new Error('demo store: the build produced no index.html');
    return assets;
  })();
  storeBuild.catch(() => {
    storeBuild = undefined;
  });
  return storeBuild;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function indexHtml(servers: Pick<DemoServers, 'demoOrigin' | 'hostileOrigin' | 'crossOrigin'>): string {
  const originOf = (o: DemoOriginName) => (o === 'demo' ? servers.demoOrigin : o === 'hostile' ? servers.hostileOrigin : servers.crossOrigin);
  const rows = (group: 'demo' | 'hostile') =>
    DEMO_PAGES.filter((p) => p.origin === group && p.id !== 'index')
      .map((p) => {
        const url = originOf(p.origin) + p.path;
        const tools = p.tools.length > 8 ? `${p.tools.length} tools` : p.tools.join(', ');
        return `<li data-page-id="${escapeHtml(p.id)}"><a href="${escapeHtml(url)}">${escapeHtml(p.title)}</a> <code>${escapeHtml(url)}</code><br><small>${escapeHtml(p.purpose)}</small><br><small>Tools: ${escapeHtml(tools)}</small></li>`;
      })
      .join('\n');
  return `<!doctype html>
<html lang="en" data-ready="true">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">
<title>Echo Console demo pages</title>
<style>body{font:15px/1.45 system-ui,sans-serif;margin:2rem;max-width:60rem}li{margin:.6rem 0}code{font-size:.85em;color:#555}</style></head>
<body>
<h1>Echo Console: WebMCP demo and hostile pages</h1>
<p>Open these in Chromium started with <code>--enable-features=WebMCPTesting</code>. Origins: demo <code>${escapeHtml(servers.demoOrigin)}</code>, hostile <code>${escapeHtml(servers.hostileOrigin)}</code>, cross-origin <code>${escapeHtml(servers.crossOrigin)}</code>. See docs/demo.md.</p>
<h2>Demo pages</h2><ul data-testid="demo-pages">${rows('demo')}</ul>
<h2>Hostile pages</h2><p>Built to attack a WebMCP client. Everything they say is untrusted.</p><ul data-testid="hostile-pages">${rows('hostile')}</ul>
</body></html>`;
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolvePort, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolvePort((server.address() as AddressInfo).port);
    });
  });
}

async function readStatic(dir: string, relative: string): Promise<Asset | null> {
  const file = resolve(dir, `.${relative}`);
  if (file !== dir && !file.startsWith(dir + sep)) return null;
  try {
    return { body: await readFile(file), type: TYPES[extname(file)] ?? 'application/octet-stream' };
  } catch {
    return null;
  }
}

/** Starts the three servers (and the in-memory shop build). Close them with `close()`. */
export async function startDemoServers(options: DemoServerOptions = {}): Promise<DemoServers> {
  const storeAssets = await buildStore();
  const origins: Record<DemoOriginName, string> = { demo: '', hostile: '', crossOrigin: '' };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const base = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' };
    const send = (status: number, type: string, body: Buffer | string, extra: Record<string, string> = {}) => {
      res.writeHead(status, { ...base, 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), ...extra });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'text/plain', 'method not allowed', { Allow: 'GET, HEAD' });
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    if (path === '/' || path === '/index.html' || path === '/hostile/' || path === '/hostile') {
      return send(200, TYPES['.html']!, indexHtml({ demoOrigin: origins.demo, hostileOrigin: origins.hostile, crossOrigin: origins.crossOrigin }));
    }
    if (path === '/_demo/config.js') {
      const config = { demoOrigin: origins.demo, hostileOrigin: origins.hostile, crossOrigin: origins.crossOrigin };
      return send(200, TYPES['.js']!, `window.ECHO_DEMO_CONFIG = Object.freeze(${JSON.stringify(config)});\n`);
    }
    if (path === '/favicon.ico') return send(204, 'text/plain', '');
    if (path === '/store' || path === '/forms' || path === '/changing' || path === '/schedule' || path === '/appointment' || path === '/spa' || path === '/bad-practices') return send(301, 'text/plain', '', { Location: `${path}/` });
    if (path.startsWith('/store/')) {
      const asset = storeAssets.get(path === '/store/' ? '/store/index.html' : path);
      return asset ? send(200, asset.type, asset.body) : send(404, 'text/plain', 'not found');
    }
    let asset: Asset | null = null;
    if (/^\/(forms|changing|schedule|appointment|common|bad-practices)\//.test(path)) asset = await readStatic(DEMO_DIR, path.endsWith('/') ? `${path}index.html` : path);
    // The single-page app: its script, and its page for every route under /spa/ (its own router decides).
    else if (path.startsWith('/spa/')) asset = await readStatic(DEMO_DIR, path === '/spa/spa.js' ? path : '/spa/index.html');
    else if (path.startsWith('/hostile/')) asset = await readStatic(HOSTILE_DIR, path.slice('/hostile'.length));
    // The snapshot benchmark's generated page (test/bench/snapshot.bench.ts), on every origin like the rest.
    else if (path.startsWith('/bench/')) asset = await readStatic(BENCH_DIR, path === '/bench/' ? '/index.html' : path.slice('/bench'.length));
    // A page whose CSP forbids evaluating strings (no 'unsafe-eval'): raw JavaScript must be refused there (csp-blocked).
    const csp: Record<string, string> = path === '/hostile/raw-js/no-eval.html' ? { 'Content-Security-Policy': "script-src 'self'" } : {};
    return asset ? send(200, asset.type, asset.body, csp) : send(404, 'text/plain', 'not found');
  };

  const servers: Server[] = [];
  const make = () => {
    const server = createServer((req, res) => {
      options.log?.(`${req.method} ${req.headers.host ?? ''}${req.url ?? ''}`);
      handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
        res.end(String(error));
      });
    });
    servers.push(server);
    return server;
  };
  const close = async () => {
    await Promise.all(
      servers.map(
        (s) =>
          new Promise<void>((done) => {
            s.close(() => done());
            s.closeAllConnections();
          }),
      ),
    );
  };
  try {
    const demoPort = await listen(make(), options.port ?? 0);
    const hostilePort = await listen(make(), options.hostilePort ?? 0);
    const crossPort = await listen(make(), options.crossOriginPort ?? 0);
    origins.demo = `http://127.0.0.1:${demoPort}`;
    origins.hostile = `http://127.0.0.1:${hostilePort}`;
    origins.crossOrigin = `http://127.0.0.1:${crossPort}`;
  } catch (error) {
    await close();
    throw error;
  }

  const at = (origin: DemoOriginName, path: string) => origins[origin] + path;
  const pages = DEMO_PAGES.map((p) => ({ ...p, url: at(p.origin, p.path) }));
  return {
    demoOrigin: origins.demo,
    hostileOrigin: origins.hostile,
    crossOrigin: origins.crossOrigin,
    pages,
    url: (id) => {
      const page = pages.find((p) => p.id === id);
      if (!page) throw new Error(`unknown demo page "${id}"`);
      return page.url;
    },
    at,
    close,
  };
}
