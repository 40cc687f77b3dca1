/**
 * A tools/call whose MCP session closes while it waits for its turn
 * (src/main/core/turns.ts) — a revoked token, an evicted session, Stop — never
 * reaches the broker: src/main/core/agent/session-server.ts checks the call's
 * abort signal after the turn and answers `session-closed`, with a receipt.
 * Driven through the SDK's client and server over its in-memory transport, with
 * the real core's broker and ledger; only the turn is held by the test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createConsoleCore, type ConsoleCore } from '../../src/main/core';
import { createSessionServer } from '../../src/main/core/agent/session-server';
import { AGENT_TOOLS } from '../../src/main/core/agent/tools';
import { AgentToolRegistry } from '../../src/main/core/agent/registry';
import { Turns } from '../../src/main/core/turns';
import type { Receipt } from '../../src/shared/receipt';

/** Turns whose next `take` waits until the test calls `release`. */
class HeldTurns extends Turns {
  release: () => void = () => undefined;
  private tookNow: () => void = () => undefined;
  /** Resolves when the call has asked for its turn. */
  readonly took = new Promise<void>((resolve) => (this.tookNow = resolve));
  override take(): Promise<void> {
    this.tookNow();
    return new Promise((resolve) => (this.release = resolve));
  }
}

let core: ConsoleCore | undefined;
let dir = '';
/** Every receipt in the ledger, newest first. */
async function receipts(c: ConsoleCore): Promise<Receipt[]> {
  const r = await c.api.queryReceipts({ limit: 500 });
  if (!r.ok) throw new Error(r.error.message);
  return r.value.receipts;
}

afterEach(async () => {
  await core?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('a call whose session closed while it waited for its turn', () => {
  it.each([true, false])('never reaches the broker, and is receipted as refused session-closed (session closed: %s)', async (close) => {
    dir = mkdtempSync(join(tmpdir(), 'echo-session-closed-'));
    core = createConsoleCore({ dataDir: dir, mcpPort: 0 });
    await core.start();
    const turns = new HeldTurns();
    const token = { id: 'tok-1', name: 'held agent' };
    const server = createSessionServer(
      { inFlight: 0, token, via: 'http' },
      { broker: core.broker, tools: new AgentToolRegistry(AGENT_TOOLS), meterCall: () => ({ ok: true }), turns },
    );
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: 'held', version: '1' });
    await client.connect(b);
    const before = (await receipts(core)).length;
    const answer = client.callTool({ name: 'list_tabs', arguments: {} }).catch((e: unknown) => e);
    await turns.took;
    if (close) await server.close();
    turns.release();
    await answer;
    const all = await receipts(core);
    const added = all.slice(0, all.length - before);
    const faculties = added.map((r) => `${r.faculty}:${r.event}`);
    if (close) {
      expect(faculties).not.toContain('list-tabs:requested');
      expect(added.find((r) => r.event === 'refused')?.detail).toMatchObject({ code: 'session-closed' });
    } else {
      // The same call on an open session does reach the broker (the check is not a blanket refusal).
      expect(faculties).toContain('list-tabs:requested');
    }
    await client.close().catch(() => undefined);
  });
});
