/**
 * Shared helpers for the ledger tests: temporary folders and sample receipt inputs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ReceiptInput } from '../../../src/shared/receipt';

/** A fresh temporary folder; `cleanup()` removes it. */
export function tempDir(prefix = 'ledger-'): { dir: string; file: (name: string) => string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, file: (name) => path.join(dir, name), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export const HASH_A = 'a'.repeat(64);
export const HASH_B = '0123456789abcdef'.repeat(4);

/** A receipt input with every optional field set (so tamper tests can touch every column). */
export function fullInput(i = 0, over: Partial<ReceiptInput> = {}): ReceiptInput {
  return {
    requestId: `req-${i}`,
    event: 'succeeded',
    faculty: 'webmcp-invoke',
    origin: 'https://shop.example',
    tabId: 10 + i,
    frameId: 0,
    documentId: `doc-${i}`,
    toolName: 'add_to_cart',
    descriptorHash: HASH_A,
    argumentsHash: HASH_B,
    actor: { kind: 'agent', name: 'claude-code', version: '1.2.3' },
    detail: { step: i, note: 'ok' },
    ...over,
  };
}

/** A minimal console event. */
export function consoleInput(over: Partial<ReceiptInput> = {}): ReceiptInput {
  return { requestId: null, event: 'link-connected', faculty: 'link', actor: { kind: 'console' }, ...over };
}
