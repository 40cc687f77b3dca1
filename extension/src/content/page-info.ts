/**
 * The `page-info` faculty's content module (ISOLATED world): reads what the
 * document shows now, for `echo:page-info:read` (lib/messages.ts ToPageInfo):
 * `location.href` (exact; the worker strips it), `document.title` as it is now,
 * `self.origin`, and whether `document.modelContext` offers `getTools` (read,
 * never assumed). Injected on demand (chrome.scripting.executeScript files)
 * only into the same-origin documents of a shared tab. Changes nothing in the
 * page. Built as a classic IIFE (vite.extension.config.ts). Runs once per
 * document: a second injection finds the first instance and does nothing.
 */
import { err, ok, type Result } from '../../../src/shared/result';
import type { PageInfoReport, ToPageInfo } from '../lib/messages';

const INSTANCE_KEY = '__echoConsolePageInfo';

function webmcp(): boolean {
  try {
    const mc = (document as unknown as { modelContext?: unknown }).modelContext;
    return !!mc && typeof mc === 'object' && typeof (mc as { getTools?: unknown }).getTools === 'function';
  } catch {
    return false;
  }
}

function read(): Result<PageInfoReport> {
  try {
    return ok({ url: String(location.href), title: String(document.title ?? ''), origin: String(self.origin), webmcp: webmcp() });
  } catch (e) {
    return err('content-error', e instanceof Error ? e.message.slice(0, 256) : 'read failed');
  }
}

/** Answers only `echo:page-info:*`; other modules share this isolated world. */
function onMessage(msg: unknown, _sender: unknown, sendResponse: (r: Result<unknown>) => void): undefined {
  const m = msg as ToPageInfo;
  if (!m || typeof m !== 'object' || m.type !== 'echo:page-info:read') return undefined;
  sendResponse(read());
  return undefined;
}

const g = globalThis as unknown as Record<string, boolean | undefined>;
if (!g[INSTANCE_KEY]) {
  g[INSTANCE_KEY] = true;
  chrome.runtime.onMessage.addListener(onMessage);
}
