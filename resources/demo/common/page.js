// Shared helpers for the static demo and hostile pages (plain browser JS, no
// build step). Every page loads /_demo/config.js, then this file, then its own
// script, and sets <html data-ready="true"> once its tools are registered, so
// tests wait for exactly that. Registration outcomes (including the ones
// Chromium refuses on purpose) are kept in window.__registrations and shown in
// the page's [data-testid=registration-log]; page text is only ever inserted
// with textContent.
(() => {
  'use strict';

  const registrations = [];
  window.__registrations = registrations;

  /** Short, printable form of a possibly huge or invisible string, for the log. */
  function visible(s) {
    const shown = s.length > 80 ? `${s.slice(0, 80)}… (${s.length} chars)` : s;
    return shown.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  }

  function logEntry(name, result, error) {
    registrations.push(error ? { name, result, error } : { name, result });
    const list = document.querySelector('[data-testid="registration-log"]');
    if (!list) return;
    const li = document.createElement('li');
    li.dataset.result = result;
    li.textContent = `${visible(name)}: ${result}${error ? ` (${error})` : ''}`;
    list.append(li);
  }

  /**
   * Registers each definition; never throws. Returns [{name, result, error?}].
   * `result` is 'registered' or 'rejected' (with `error` = "Name: message").
   */
  async function registerAll(definitions, options = {}) {
    const mc = document.modelContext;
    const out = [];
    for (const def of definitions) {
      if (!mc) {
        out.push({ name: def.name, result: 'rejected', error: 'document.modelContext is not available' });
        continue;
      }
      try {
        await mc.registerTool(def, options.signal ? { signal: options.signal } : undefined);
        out.push({ name: def.name, result: 'registered' });
        if (!options.quiet) logEntry(def.name, 'registered');
      } catch (e) {
        const error = `${e && e.name}: ${e && e.message}`;
        out.push({ name: def.name, result: 'rejected', error });
        logEntry(def.name, 'rejected', error);
      }
    }
    return out;
  }

  function markReady() {
    document.documentElement.dataset.ready = document.modelContext ? 'true' : 'unavailable';
    document.dispatchEvent(new Event('echo-demo:ready'));
  }

  function warnIfUnavailable() {
    if (document.modelContext) return false;
    const p = document.createElement('p');
    p.className = 'unavailable';
    p.dataset.testid = 'webmcp-unavailable';
    p.textContent = 'document.modelContext is not available: start Chromium with --enable-features=WebMCPTesting.';
    document.body.prepend(p);
    return true;
  }

  /** Counts toolchange events into <html data-toolchange-count>. */
  function countToolChanges() {
    let n = 0;
    document.modelContext?.addEventListener('toolchange', () => {
      n += 1;
      document.documentElement.dataset.toolchangeCount = String(n);
    });
    return () => n;
  }

  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  /**
   * Declarative tools need no registration: wait (up to ~1 s) until the browser lists every one of
   * `names`, then mark the page ready.
   */
  async function readyWhenListed(names) {
    const mc = document.modelContext;
    if (mc) {
      for (let i = 0; i < 50; i++) {
        const listed = (await mc.getTools()).map((t) => t.name);
        if (names.every((n) => listed.includes(n))) break;
        await sleep(20);
      }
    }
    markReady();
  }

  window.EchoDemo = Object.freeze({ registerAll, markReady, readyWhenListed, warnIfUnavailable, countToolChanges, visible, sleep, config: window.ECHO_DEMO_CONFIG });
})();
