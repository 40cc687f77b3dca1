// The console itself going away, as the console UI shows it: the extension's
// link as unknown while the console is unreachable, the banner's words, and the
// stores refreshed (and "unreachable" errors forgotten) when it is back.
import { describe, expect, it, vi } from 'vitest';
import { bindConsole, createConsoleStores } from '../../src/renderer/stores';
import { bannerText, consoleReachable, createConnectionStore, linkLabel } from '../../src/renderer/stores/connection';
import { withPlainErrors } from '../../src/renderer/transport/errors';
import type { TransportState } from '../../src/renderer/transport/ws-client';
import { FakeConsole, sampleApproval } from '../support/fake-console';
import { fakeTransport } from '../support/fake-transport';

describe('the link badge and the banner while the console is unreachable', () => {
  const now = 1_700_000_000_000;
  const fresh = { state: 'connected' as const, paired: true, lastHeartbeatAt: now - 1_000 };
  it('shows the extension link as unknown, never "Connected", unless the console answers', () => {
    expect(linkLabel(fresh, now, 'open')).toMatchObject({ tone: 'ok', text: 'Connected' });
    for (const t of ['reconnecting', 'unauthorized', 'connecting'] as const) {
      expect(linkLabel(fresh, now, t)).toMatchObject({ tone: 'idle', text: 'Unknown' });
      expect(consoleReachable(t)).toBe(false);
    }
    expect(linkLabel(fresh, now, 'reconnecting').detail).toMatch(/console is not reachable/);
    expect(linkLabel(fresh, now)).toMatchObject({ text: 'Connected' }); // IPC: no transport state
  });

  it('says the console is unreachable, and what to do', () => {
    expect(bannerText('open')).toBeNull();
    expect(bannerText('connecting')).toBeNull();
    const lost = bannerText('reconnecting')!;
    expect(`${lost.title} ${lost.body}`).toContain(
      'The console is not running or this page lost its connection to it. Reconnecting… If you restarted the console, open the new link it printed.',
    );
    expect(bannerText('unauthorized')!.body).toMatch(/open the new link it printed/);
    expect(bannerText('unauthorized')!.body).toMatch(/works once/);
  });
});

describe('stores across a lost and restored console', () => {
  it('refreshes the snapshot and receipts and forgets "unreachable" errors when the transport reopens', async () => {
    const fake = new FakeConsole({ approvals: [sampleApproval(Date.now())], receiptCount: 3 });
    const { transport, go } = fakeTransport('open');
    const stores = createConsoleStores(fake);
    bindConsole(fake, stores, transport);
    // The receipts page was shown (it loads its first page itself), so a reopened transport reloads it too.
    await stores.receipts.getState().loadFirst();
    expect(stores.receipts.getState().items).toHaveLength(3);
    const snapshots = () => fake.calls.filter((c) => c.method === 'getSnapshot').length;
    expect(snapshots()).toBe(1);

    go('reconnecting');
    expect(stores.connection.getState().transport).toBe('reconnecting');
    stores.receipts.setState({ verifyError: { code: 'disconnected', message: 'x' } });
    stores.connection.setState({ error: { code: 'timeout', message: 'x' }, pairingError: { code: 'disconnected', message: 'x' } });
    stores.settings.setState({ error: { code: 'invalid-input', message: 'kept' } });
    // Meanwhile the console changed: the approval is gone, a receipt was added.
    fake.approvals = [];
    await fake.verifyLedger();
    fake.receipts.push({ ...fake.receipts[2]!, seq: 4, id: 'r4' });

    go('open');
    expect(stores.receipts.getState().verifyError).toBeNull();
    expect(stores.connection.getState().error).toBeNull();
    expect(stores.connection.getState().pairingError).toBeNull();
    expect(stores.settings.getState().error?.message).toBe('kept');
    await vi.waitFor(() => expect(snapshots()).toBe(2));
    await vi.waitFor(() => expect(stores.approvals.getState().pending).toEqual([]));
    await vi.waitFor(() => expect(stores.receipts.getState().items[0]!.id).toBe('r4'));
  });

  it('over the WebSocket asks the snapshot once, before the first welcome (it goes out behind the hello), and again after each lost connection', async () => {
    const fake = new FakeConsole();
    const { transport, go } = fakeTransport('connecting');
    const snapshots = () => fake.calls.filter((c) => c.method === 'getSnapshot').length;
    const stores = createConsoleStores(fake);
    bindConsole(fake, stores, transport);
    expect(snapshots()).toBe(1); // asked while still connecting
    go('open');
    await Promise.resolve();
    expect(snapshots()).toBe(1); // the first welcome does not ask again
    go('reconnecting');
    go('open');
    await vi.waitFor(() => expect(snapshots()).toBe(2));
  });

  it('asks the snapshot again when the first connection failed before its welcome', async () => {
    const fake = new FakeConsole();
    const { transport, go } = fakeTransport('connecting');
    const stores = createConsoleStores(fake);
    bindConsole(fake, stores, transport);
    go('reconnecting'); // the snapshot asked while connecting was answered `disconnected`
    go('open');
    await vi.waitFor(() => expect(fake.calls.filter((c) => c.method === 'getSnapshot')).toHaveLength(2));
  });

  it('asks the snapshot again on the first welcome when the one asked at start already failed (timed out waiting for a slow first connection)', async () => {
    const fake = new FakeConsole({ approvals: [sampleApproval()] });
    let asked = 0;
    const real = fake.getSnapshot.bind(fake);
    // The first answer: the 30 s call timeout, run out while the page was still connecting.
    fake.getSnapshot = async () => (++asked === 1 ? { ok: false, error: { code: 'timeout', message: 'x' } } : real());
    const { transport, go } = fakeTransport('connecting');
    const stores = createConsoleStores(fake);
    bindConsole(fake, stores, transport);
    await vi.waitFor(() => expect(stores.connection.getState().error?.code).toBe('timeout'));
    go('open');
    // The welcome clears the transport's error: the snapshot must come with it, not an empty console.
    await vi.waitFor(() => expect(stores.approvals.getState().pending.map((a) => a.requestId)).toEqual(['req-1']));
    expect(asked).toBe(2);
  });

  it('a deep link answered `disconnected` (the first connection failed before its welcome) says so, not that the request does not exist, and is followed again on the welcome', async () => {
    const fake = new FakeConsole({ receiptCount: 3 });
    let down = true;
    const real = fake.queryRequests.bind(fake);
    fake.queryRequests = async (p) => (down ? { ok: false, error: { code: 'disconnected', message: 'x' } } : real(p));
    const { transport, go } = fakeTransport('connecting');
    const stores = createConsoleStores(fake);
    bindConsole(fake, stores, transport);
    // main.tsx follows the link the page opened with before the first render.
    await stores.timeline.getState().follow({ view: 'timeline', filter: {}, request: 'req-2' });
    expect(stores.timeline.getState()).toMatchObject({ notice: null, error: { code: 'disconnected' } });
    go('reconnecting');
    down = false;
    go('open');
    await vi.waitFor(() => expect(stores.timeline.getState().expanded).toEqual(['req-2']));
    expect(stores.timeline.getState()).toMatchObject({ loaded: true, error: null, notice: null, filter: { requestId: 'req-2' } });
    expect(stores.timeline.getState().rows.map((r) => r.requestId)).toEqual(['req-2']);
  });

  it('keeps a failed pairing answer beside the code, and clears it when the link moves on', async () => {
    const fake = new FakeConsole();
    const s = createConnectionStore(
      withPlainErrors(Object.assign(fake, { confirmPairing: async () => ({ ok: false as const, error: { code: 'timeout', message: 'confirmPairing got no answer.' } }) })),
    );
    s.getState().setLink({ state: 'awaiting-pairing', paired: false, pairingCode: '481 207' });
    await s.getState().confirmPairing(true);
    expect(s.getState().pairingError?.code).toBe('timeout');
    expect(s.getState().pairingError?.message).not.toMatch(/confirmPairing/);
    expect(s.getState().error).toBeNull();
    s.getState().setLink({ state: 'connected', paired: true, lastHeartbeatAt: Date.now() });
    expect(s.getState().pairingError).toBeNull();
  });
});
