/**
 * A renderer transport whose state a test moves by hand (`go`), as src/renderer/transport/ws-client.ts
 * reports it: for bindConsole (stores/index.ts) and the first render (first-render.ts).
 * `listeners` is the live set of subscribers, so a test can check they were let go.
 */
import type { TransportState } from '../../src/renderer/transport/ws-client';

export function fakeTransport(initial: TransportState) {
  let state = initial;
  const listeners = new Set<(s: TransportState) => void>();
  const transport = { state: () => state, onState: (l: (s: TransportState) => void) => (listeners.add(l), () => void listeners.delete(l)) };
  const go = (s: TransportState) => {
    state = s;
    for (const l of listeners) l(s);
  };
  return { transport, go, listeners };
}
