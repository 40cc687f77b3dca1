/**
 * The hashing vectors inside a real Chromium page: src/shared/canonical.ts and
 * the vector checker are bundled for the browser with vite (library mode, IIFE,
 * into a temp dir; no network), served from a loopback HTTP server (a secure
 * context, so `crypto.subtle` exists), and every vector of
 * test/vectors/hashing.json is computed in the page with WebCrypto.
 */
import { expect, test, type Browser } from '@playwright/test';
import { chromium } from '@playwright/test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import type { HashingVectorFile, VectorResult } from '../vectors/check-hashing';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium';

const CHECKER = fileURLToPath(new URL('../vectors/check-hashing.ts', import.meta.url));
const VECTORS_TEXT = readFileSync(fileURLToPath(new URL('../vectors/hashing.json', import.meta.url)), 'utf8');
const VECTORS = JSON.parse(VECTORS_TEXT) as HashingVectorFile;

/** The global the IIFE bundle defines: the checker's exports plus canonical.ts's WebCrypto back end. */
interface PageApi {
  checkAll: (f: HashingVectorFile, sha256: unknown) => Promise<{ checked: number; problems: string[] }>;
  computeVector: (v: HashingVectorFile['vectors'][number], sha256: unknown) => Promise<VectorResult>;
  webCryptoSha256: unknown;
}

let outDir = '';
let server: Server | undefined;
let origin = '';
let browser: Browser | undefined;

test.beforeAll(async () => {
  outDir = mkdtempSync(join(tmpdir(), 'echo-hashing-'));
  // The checker is the entry: it also re-exports canonical.ts's WebCrypto back end.
  await build({
    configFile: false,
    logLevel: 'warn',
    publicDir: false,
    build: {
      outDir,
      emptyOutDir: true,
      minify: false,
      write: true,
      lib: { entry: CHECKER, formats: ['iife'], name: 'EchoHashing', fileName: () => 'hashing.js' },
    },
  });
  const bundle = readFileSync(join(outDir, 'hashing.js'), 'utf8');
  const html = '<!doctype html><meta charset="utf-8"><title>hashing vectors</title><script src="/hashing.js"></script>';
  server = createServer((req, res) => {
    const [type, body] =
      req.url === '/hashing.js' ? ['text/javascript', bundle] : req.url === '/vectors.json' ? ['application/json', VECTORS_TEXT] : ['text/html', html];
    res.writeHead(200, { 'content-type': `${type}; charset=utf-8`, 'cache-control': 'no-store' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
});

test.afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

test('every hashing vector passes inside Chromium with WebCrypto', async () => {
  const page = await browser!.newPage();
  await page.goto(`${origin}/`);
  // tsconfig.node.json has no DOM lib: page globals are reached through typed casts.
  expect(
    await page.evaluate(() => {
      const g = globalThis as unknown as { isSecureContext: boolean; crypto?: { subtle?: { digest?: unknown } } };
      return g.isSecureContext && typeof g.crypto?.subtle?.digest === 'function';
    }),
  ).toBe(true);
  const result = await page.evaluate(async () => {
    const api = (globalThis as unknown as { EchoHashing: PageApi }).EchoHashing;
    // The page fetches the file itself, so the vectors are parsed by the page's JSON.parse.
    const file = (await (await fetch('/vectors.json')).json()) as HashingVectorFile;
    return api.checkAll(file, api.webCryptoSha256);
  });
  expect(result.problems).toEqual([]);
  expect(result.checked).toBe(VECTORS.vectors.length + VECTORS.rejects.length);
  expect(result.checked).toBeGreaterThanOrEqual(30);
  await page.close();
});

test('the page computes the expected text and hash for each vector, compared in Node', async () => {
  // The same comparison from the outside, so a checker that wrongly reported
  // success in the page could not hide a mismatch.
  const page = await browser!.newPage();
  await page.goto(`${origin}/`);
  const computed = await page.evaluate(async (file: HashingVectorFile) => {
    const api = (globalThis as unknown as { EchoHashing: PageApi }).EchoHashing;
    const out: VectorResult[] = [];
    for (const v of file.vectors) out.push(await api.computeVector(v, api.webCryptoSha256));
    return out;
  }, VECTORS);
  expect(computed.map((c) => [c.name, c.canonical, c.sha256])).toEqual(VECTORS.vectors.map((v) => [v.name, v.canonical, v.sha256]));
  await page.close();
});
