/**
 * The renderer's first module (main.tsx imports it before anything else): it opens the
 * transport, so that in the web host the WebSocket's handshake runs while the browser is
 * still evaluating React and the console's modules. Its `open` then comes before React's
 * first render, and the calls main.tsx makes before rendering (the snapshot, a deep link's
 * query) go out right behind the hello (transport/ws-client.ts). Measured by
 * `npm run bench -- timeline` (docs/timeline.md, "Figures").
 *
 * Keep its imports few: everything it imports is evaluated before the socket is created.
 */
import { openTransport, type Transport } from './transport';

/** This page's transport (the Electron preload's `window.echo`, or the web host's WebSocket). */
export const transport: Transport = openTransport();
