/** Renderer entry: pick the transport (preload or WebSocket), wire the stores, render. */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App, StoresContext } from './App';
import { PicturesContext } from './components/subjects/target-picture';
import { bindConsole, createConsoleStores } from './stores';
import { openTransport } from './transport';
import './styles.css';

const root = createRoot(document.getElementById('root')!);
const transport = openTransport();
const stores = createConsoleStores(transport.api);
bindConsole(transport.api, stores, transport);
root.render(
  <StrictMode>
    <StoresContext.Provider value={stores}>
      <PicturesContext.Provider value={stores.pictures}>
        <App transportKind={transport.kind} />
      </PicturesContext.Provider>
    </StoresContext.Provider>
  </StrictMode>,
);
