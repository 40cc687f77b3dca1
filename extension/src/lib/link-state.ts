/**
 * What the popup shows of the link, derived from whatever state the link
 * module reports. Pure (unit-tested): "connected" is shown only with a
 * heartbeat answered within LIMITS.heartbeatTimeoutMs, never from a stale flag.
 */
import type { PopupLinkState } from './messages';

/** Turn whatever the link reports into what the popup shows (defensive: the link's state shape is its own). */
export function popupLinkState(s: unknown, now: number, heartbeatTimeoutMs: number): PopupLinkState {
  if (!s || typeof s !== 'object') return { state: 'connecting', paired: false };
  const x = s as Record<string, unknown>;
  const paired = x.paired === true;
  const lastHeartbeatAt = typeof x.lastHeartbeatAt === 'number' ? x.lastHeartbeatAt : undefined;
  const raw = typeof x.state === 'string' ? x.state : 'unknown';
  const known: PopupLinkState['state'][] = ['not-installed', 'connecting', 'console-not-running', 'awaiting-pairing', 'connected', 'disconnected', 'version-mismatch', 'refused', 'stopped'];
  let state: PopupLinkState['state'] = (known as string[]).includes(raw) ? (raw as PopupLinkState['state']) : 'unknown';
  // "Connected" only with a fresh heartbeat: a stale one means the link is not known to be up.
  if (state === 'connected' && (lastHeartbeatAt === undefined || now - lastHeartbeatAt > heartbeatTimeoutMs)) state = 'disconnected';
  const out: PopupLinkState = { state, paired };
  if (typeof x.pairingCode === 'string') out.pairingCode = x.pairingCode;
  if (x.awaitingLocalConfirmation === true) out.awaitingLocalConfirmation = true;
  if (paired && x.unconfirmedPairing === true) out.unconfirmedPairing = true;
  if (lastHeartbeatAt !== undefined) out.lastHeartbeatAt = lastHeartbeatAt;
  const message = typeof x.message === 'string' ? x.message : typeof (x.error as { message?: unknown })?.message === 'string' ? (x.error as { message: string }).message : undefined;
  if (message) out.message = message.slice(0, 300);
  const pr = x.problem as { code?: unknown; message?: unknown } | undefined;
  if (pr && typeof pr === 'object' && (pr.code === 'extension-outdated' || pr.code === 'console-outdated' || pr.code === 'pair-again') && typeof pr.message === 'string') {
    out.problem = { code: pr.code, message: pr.message.slice(0, 300) };
  }
  return out;
}
