import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App, type StoreDemoDebug } from './App';
import { StoreFacade } from './facade';
import './store.css';

declare global {
  interface Window {
    __storeDemo?: StoreDemoDebug;
  }
}

// Query parameters: ?strict=0 renders without <StrictMode>; ?delayMs=N delays
// every mutating tool's answer by N ms after the commit (for timeout tests).
const params = new URLSearchParams(location.search);
const strict = params.get('strict') !== '0';
const delayMs = Math.max(0, Math.min(600_000, Number(params.get('delayMs')) || 0));

// Created once, outside React: Strict Mode's double render and double effects
// all see the same facade.
const facade = new StoreFacade();
const debug: StoreDemoDebug = { effectRuns: 0, cleanups: 0, facade };
window.__storeDemo = debug;

const app = <App facade={facade} debug={debug} delayMs={delayMs} />;
createRoot(document.getElementById('root')!).render(strict ? <StrictMode>{app}</StrictMode> : app);
