// The console UI's side of Stop and the badges (issue 12 items 5 and 7), without a browser: the
// in-flight store against the in-test ConsoleApi (Stop, Stop everything, the reload offers),
// event routing (`in-flight`, the notification's `open-approval`), the words of the report and
// the title with the count. The browser path is test/e2e/stop.spec.ts.
import { describe, expect, it } from 'vitest';
import { consoleTitle, stopReportText, stopWords } from '../../src/renderer/stop-text';
import { applyEvent, createConsoleStores } from '../../src/renderer/stores';
import { createInFlightStore, inFlightById, withSharing } from '../../src/renderer/stores/inflight';
import type { InFlightView } from '../../src/shared/ipc';
import { FakeConsole, sampleApproval } from '../support/fake-console';

const flight = (requestId: string, phase: InFlightView['phase'], tabId = 42, startedAt = 1): InFlightView => ({
  requestId,
  faculty: 'webmcp-invoke',
  operation: 'invoke',
  tabId,
  agent: 'Claude Code',
  phase,
  startedAt,
});

describe('in-flight store', () => {
  it('keeps the list oldest first; Stop after dispatch offers the reload of that tab, before dispatch it does not', async () => {
    const api = new FakeConsole();
    api.sharedTabs = [{ tabId: 42, windowId: 1, title: '', url: 'https://shop.example/', origin: 'https://shop.example', documentId: 'D', sharedAt: 1 }];
    api.inFlight = [flight('run', 'dispatched', 42, 2), flight('wait', 'awaiting-approval', 7, 1)];
    const s = createInFlightStore(api);
    s.getState().setRequests(api.inFlight);
    expect(s.getState().requests.map((r) => r.requestId)).toEqual(['wait', 'run']);
    expect(inFlightById(s.getState().requests, 'run')?.phase).toBe('dispatched');

    expect(await s.getState().stop('wait')).toBe(true);
    expect(s.getState().offers).toEqual([]);
    expect(await s.getState().stop('run')).toBe(true);
    expect(s.getState().offers).toEqual([{ requestId: 'run', tabId: 42 }]);
    expect(await s.getState().stop('gone')).toBe(false);
    expect(s.getState().error).toMatchObject({ code: 'unknown-request' });

    expect(await s.getState().reload(42)).toBe(true);
    expect(api.calls.filter((c) => c.method === 'reloadTab').map((c) => c.params)).toEqual([{ tabId: 42 }]);
    expect(s.getState().offers).toEqual([]);
  });

  it('Stop everything keeps its report and offers the reloads of what it stopped after dispatch', async () => {
    const api = new FakeConsole();
    api.approvals = [sampleApproval(1, { requestId: 'p' })];
    api.inFlight = [flight('run', 'dispatched', 9)];
    api.settings = { ...api.settings, developerMode: true };
    const s = createInFlightStore(api);
    expect(await s.getState().stopEverything()).toBe(true);
    const report = s.getState().report!;
    expect(report).toMatchObject({ denied: ['p'], stopped: [{ requestId: 'run', afterDispatch: true }], developerModeSwitchedOff: true });
    expect(s.getState().offers).toEqual([{ requestId: 'run', tabId: 9 }]);
    expect(stopReportText(report)).toBe(
      'Stopped everything: 1 request denied, 1 running request stopped, 1 tab unshared, 0 agent sessions closed, developer mode switched off. Agent tokens stay valid; revoke one in Connection to keep its agent out.',
    );
  });

  it('a reload is offered with a button only while its tab is shared: not after Stop everything unshared it (it would be refused tab-not-shared), again once it is shared again', async () => {
    const api = new FakeConsole();
    const tab = (tabId: number) => ({ tabId, windowId: 1, title: '', url: 'https://shop.example/', origin: 'https://shop.example', documentId: `D${tabId}`, sharedAt: 1 });
    api.sharedTabs = [tab(9), tab(5)];
    api.inFlight = [flight('earlier', 'dispatched', 5), flight('run', 'dispatched', 9)];
    const s = createInFlightStore(api);
    expect(await s.getState().stop('earlier')).toBe(true);
    expect(withSharing(s.getState().offers, new Set([9, 5]))).toEqual([{ requestId: 'earlier', tabId: 5 }]);
    expect(await s.getState().stopEverything()).toBe(true);
    expect(s.getState().report!.unshared).toEqual([9, 5]);
    // Nothing shared now: both offers say to reload in Chrome.
    expect(withSharing(s.getState().offers, new Set())).toEqual([{ requestId: 'earlier', tabId: 5, unshared: true }, { requestId: 'run', tabId: 9, unshared: true }]);
    // Tab 9 shared again from the popup: its Reload button is back; tab 5's offer still says Chrome.
    expect(withSharing(s.getState().offers, new Set([9]))).toEqual([{ requestId: 'earlier', tabId: 5, unshared: true }, { requestId: 'run', tabId: 9 }]);
  });

  it('says what Stop does in each phase', () => {
    expect(stopWords('dispatched')).toMatch(/outcome will be unknown/);
    expect(stopWords('awaiting-approval')).toMatch(/nothing is done in the page/);
  });
});

describe('event routing and the title', () => {
  it('in-flight events fill the store; a notification click opens that request even after the person closed it', () => {
    const stores = createConsoleStores(new FakeConsole());
    applyEvent(stores, { kind: 'in-flight', requests: [flight('x', 'resolving')] });
    expect(stores.inflight.getState().requests.map((r) => r.requestId)).toEqual(['x']);
    applyEvent(stores, { kind: 'approvals', approvals: [sampleApproval(1, { requestId: 'a' }), sampleApproval(2, { requestId: 'b' })] });
    stores.approvals.getState().close();
    stores.approvals.getState().close();
    expect(stores.approvals.getState().openId).toBeNull();
    applyEvent(stores, { kind: 'open-approval', requestId: 'b' });
    expect(stores.approvals.getState().openId).toBe('b');
  });

  it('the title counts the approvals waiting, before the developer mode prefix', () => {
    expect(consoleTitle(false)).toBe('Echo Console');
    expect(consoleTitle(false, 2)).toBe('(2) Echo Console');
    expect(consoleTitle(true, 1)).toBe('(1) DEVELOPER MODE · Echo Console');
    expect(consoleTitle(true, 0)).toBe('DEVELOPER MODE · Echo Console');
  });
});
