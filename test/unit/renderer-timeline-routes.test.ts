// The timeline's deep-link fragments without a browser (docs/timeline.md, "Deep links"):
// parsed, built, hostile ones dropped, the web host's session kept; and when a list's rows
// are the same list for scroll keeping (components/new-list.ts).
import { describe, expect, it } from 'vitest';
import { isNewList } from '../../src/renderer/components/new-list';
import { parseRoute, routeFragment } from '../../src/renderer/route';
import { sessionFromFragment } from '../../src/renderer/transport/token';
import { receiptLink, requestLink } from '../../src/shared/request-summary';

const SID = 'A'.repeat(32);

describe('deep links', () => {
  it('parses the timeline and receipt routes, and drops what is not one', () => {
    expect(parseRoute(requestLink('req-1'))).toEqual({ view: 'timeline', filter: {}, request: 'req-1' });
    expect(parseRoute(receiptLink('0b7c-11'))).toEqual({ view: 'receipt', receiptId: '0b7c-11' });
    expect(parseRoute('#/timeline?origin=https%3A%2F%2Fa.example&outcome=denied&faculty=semantic&event=refused&q=bank&from=5&to=9&tool=t&agent=Cursor')).toEqual({
      view: 'timeline',
      request: null,
      filter: { origin: 'https://a.example', outcome: 'denied', faculty: 'semantic', event: 'refused', text: 'bank', from: 5, to: 9, toolName: 't', agent: 'Cursor' },
    });
    // Hostile or unknown values are dropped, never passed on.
    expect(parseRoute('#/timeline?outcome=__proto__&faculty=x&event=y&from=-1&request=%3Cscript%3E')).toEqual({ view: 'timeline', filter: {}, request: null });
    expect(parseRoute('#/receipt/%E0%A4%A')).toBeNull();
    expect(parseRoute('#/receipt/a b')).toBeNull();
    expect(parseRoute('#session=' + SID)).toBeNull();
    expect(parseRoute('#token=abc')).toBeNull();
    expect(parseRoute('')).toBeNull();
    expect(parseRoute('#/settings')).toBeNull();
  });

  it('keeps the web host session id in the fragment, where the transport finds it again', () => {
    const f = routeFragment({ view: 'receipt', receiptId: 'r-1' }, SID);
    expect(f).toBe(`#/receipt/r-1?session=${SID}`);
    expect(sessionFromFragment(f)).toBe(SID);
    expect(parseRoute(f)).toEqual({ view: 'receipt', receiptId: 'r-1' });
    const t = routeFragment({ view: 'timeline', filter: { origin: 'https://a.example', outcome: 'open' }, request: 'q-1' }, SID);
    expect(sessionFromFragment(t)).toBe(SID);
    expect(parseRoute(t)).toEqual({ view: 'timeline', filter: { origin: 'https://a.example', outcome: 'open' }, request: 'q-1' });
    expect(sessionFromFragment(`#session=${SID}`)).toBe(SID);
    expect(sessionFromFragment('#/timeline')).toBeNull();
  });
});

describe('keeping the view when the top of a list moves', () => {
  it('rows put on top, let go from the top, or added below are the same list; no first row in common is a new list', () => {
    const id = (x: string) => x;
    expect(isNewList(['c', 'b', 'a'], ['e', 'd', 'c', 'b'], id)).toBe(false);
    expect(isNewList(['e', 'd', 'c', 'b'], ['c', 'b', 'a'], id)).toBe(false);
    expect(isNewList(['c', 'b'], ['c', 'b', 'a'], id)).toBe(false);
    expect(isNewList(['c', 'b'], ['y', 'x'], id)).toBe(true);
    expect(isNewList([], ['a'], id)).toBe(false);
  });
});
