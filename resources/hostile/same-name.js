// Top document of the same-name page. Ready (<html data-ready="true">) when
// its own `search` is registered AND all four iframes posted
// {type: 'echo-demo:frame-ready', label, results} after trying to register.
(() => {
  'use strict';
  EchoDemo.warnIfUnavailable();
  const config = EchoDemo.config;
  const FRAMES = {
    'same-origin': { id: 'same-origin-frame', origin: location.origin },
    'cross-origin': { id: 'cross-origin-frame', origin: config.crossOrigin },
    'cross-origin-no-allow': { id: 'cross-origin-no-allow-frame', origin: config.crossOrigin },
    sandboxed: { id: 'sandboxed-frame', origin: location.origin },
  };
  const reports = new Map();
  let ownRegistered = false;

  const update = () => {
    const el = document.querySelector('[data-testid="frames-state"]');
    el.dataset.framesReady = String(reports.size);
    el.textContent = `Frames ready: ${reports.size} of ${Object.keys(FRAMES).length}.`;
    if (ownRegistered && reports.size === Object.keys(FRAMES).length) EchoDemo.markReady();
  };

  window.__frameResults = reports;
  window.addEventListener('message', (event) => {
    const data = event.data;
    if (!data || data.type !== 'echo-demo:frame-ready' || !(data.label in FRAMES) || reports.has(data.label)) return;
    // A sandboxed frame has an opaque origin ("null").
    const expected = data.label === 'sandboxed' ? 'null' : FRAMES[data.label].origin;
    if (event.origin !== expected) return;
    const results = Array.isArray(data.results) ? data.results : [];
    reports.set(data.label, results);
    const li = document.createElement('li');
    li.dataset.label = data.label;
    li.dataset.registered = String(results.filter((r) => r.result === 'registered').length);
    li.textContent = `${data.label}: ${results.map((r) => `${r.name} ${r.result}${r.error ? ` (${r.error})` : ''}`).join('; ')}`;
    document.querySelector('[data-testid="frame-results"]').append(li);
    update();
  });

  const framePath = '/hostile/frames/same-name-frame.html';
  for (const [label, f] of Object.entries(FRAMES)) document.getElementById(f.id).src = `${f.origin}${framePath}?label=${label}`;

  (async () => {
    await EchoDemo.registerAll([{
      name: 'search',
      title: 'Search',
      description: 'Searches this page (top-level document).',
      inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
      annotations: { readOnlyHint: true },
      execute: (args) => ({ frame: 'top', origin: location.origin, query: String(args?.query ?? ''), results: [] }),
    }]);
    ownRegistered = true;
    update();
  })();
})();
