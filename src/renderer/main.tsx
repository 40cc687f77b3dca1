/**
 * Renderer entry: pick the transport (preload or WebSocket), wire the stores, follow the deep
 * link the page opened with (./route.ts), render. The snapshot and the deep link's query are
 * asked before the first render, so in the web host they go out with the socket's hello
 * (transport/ws-client.ts); React draws once they are in (./first-render.ts).
 */
// First: opens the socket before the modules below are evaluated (./boot.ts).
import { transport } from './boot';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App, StoresContext } from './App';
import { PicturesContext } from './components/subjects/target-picture';
import { FIRST_RENDER_CAP_MS, firstRenderReady } from './first-render';
import { bindConsole, createConsoleStores } from './stores';
import { parseRoute } from './route';
import './styles.css';
import './pages.css';

const root = createRoot(document.getElementById('root')!);
const stores = createConsoleStores(transport.api);
const snapshot = new Promise<void>((resolve) => void bindConsole(transport.api, stores, transport, resolve));
const start = parseRoute(window.location.hash);
if (start) void stores.timeline.getState().follow(start);
// Drawn once, with the first screen's data (./first-render.ts).
void firstRenderReady({ snapshot, timeline: start ? stores.timeline : null, transport, capMs: FIRST_RENDER_CAP_MS }).then(() =>
  root.render(
    <StrictMode>
      <StoresContext.Provider value={stores}>
        <PicturesContext.Provider value={stores.pictures}>
          <App transportKind={transport.kind} startSection={start ? 'timeline' : undefined} />
        </PicturesContext.Provider>
      </StoresContext.Provider>
    </StrictMode>,
  ),
);
