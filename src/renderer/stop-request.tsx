/**
 * Stop for one request in flight, wired to the stores (issue 12 item 5; docs/stop.md): the
 * container the "Running now" list and the timeline's open rows use. Its own module, so the
 * audit pages and App.tsx can both import it.
 */
import { useStore } from 'zustand';
import { StopButton } from './components/StopButton';
import { inFlightById } from './stores/inflight';
import { useOnline, useStores } from './use-stores';

/**
 * Stop for one request in flight, wired to the stores: the container a timeline row uses
 * (`<StopRequest requestId={…} />`); renders nothing when the request is not in flight.
 */
export function StopRequest(props: { requestId: string }) {
  const { inflight } = useStores();
  const request = useStore(inflight, (s) => inFlightById(s.requests, props.requestId));
  const busy = useStore(inflight, (s) => s.busy === props.requestId);
  const online = useOnline();
  if (!request) return null;
  return <StopButton requestId={request.requestId} phase={request.phase} busy={busy} disabled={!online || request.stopping === true} onStop={(id) => void inflight.getState().stop(id)} />;
}

