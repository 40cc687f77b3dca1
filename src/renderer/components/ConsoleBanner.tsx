/**
 * The console itself is unreachable: the web host stopped (Ctrl+C), crashed or
 * was restarted, or refused this page's session. Shown across the top of every
 * page while the transport is not open (after its first connection attempt),
 * so it cannot be mistaken for the extension's link state. Presentational.
 */
import { bannerText } from '../stores/connection';
import type { TransportState } from '../transport/ws-client';

export function ConsoleBanner(props: { transport: TransportState }) {
  const text = bannerText(props.transport);
  if (!text) return null;
  return (
    <div className="console-banner" role="alert" data-testid="console-banner" data-state={props.transport}>
      <strong>{text.title}</strong>
      <span>{text.body}</span>
    </div>
  );
}
