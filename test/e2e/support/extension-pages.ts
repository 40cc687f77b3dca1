/**
 * Tiny HTTP servers for the extension's end-to-end tests: two origins
 * (`http://127.0.0.1:<a>` and `http://127.0.0.1:<b>`, different ports, hence
 * different origins) serving pages that a test defines inline. Loopback only;
 * nothing is fetched from elsewhere.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestPages {
  /** `http://127.0.0.1:<port>` of the first server. */
  a: string;
  /** `http://127.0.0.1:<port>` of the second server: another origin. */
  b: string;
  /** Serve `html` at `path` on both servers. */
  set(path: string, html: string): void;
  close(): Promise<void>;
}

function listen(pages: Map<string, string>): Promise<Server> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const html = pages.get(path);
    if (html === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(html);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Start both servers. */
export async function startTestPages(): Promise<TestPages> {
  const pages = new Map<string, string>();
  const sa = await listen(pages);
  const sb = await listen(pages);
  const origin = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  return {
    a: origin(sa),
    b: origin(sb),
    set: (path, html) => void pages.set(path, html),
    close: async () => {
      await Promise.all(
        [sa, sb].map((s) => {
          s.closeAllConnections();
          return new Promise<void>((r) => s.close(() => r()));
        }),
      );
    },
  };
}

/** A page script registering one imperative tool that adds `a` and `b` (or runs `body`). */
export function toolScript(name: string, opts: { description?: string; body?: string; schema?: unknown; annotations?: unknown } = {}): string {
  const schema = JSON.stringify(opts.schema ?? { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } });
  const annotations = opts.annotations === undefined ? '' : `annotations: ${JSON.stringify(opts.annotations)},`;
  const body = opts.body ?? 'return JSON.stringify({ sum: input.a + input.b });';
  return `document.modelContext.registerTool({ name: ${JSON.stringify(name)}, description: ${JSON.stringify(opts.description ?? `tool ${name}`)},
    inputSchema: ${schema}, ${annotations} execute: async (input) => { ${body} } });`;
}
