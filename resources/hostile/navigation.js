// Navigation during approval. window.__navigate(kind = 'same-page', delayMs = 0)
// returns the URL it goes to (or the new URL for hash/push-state):
//   same-page     navigation.html?gen=N+1: a NEW document, identical place_order descriptor
//   reload        location.reload(): a new document, same URL
//   cross-origin  the same page on the cross-origin server (same tool name, other origin)
//   no-tools      navigation.html?gen=N+1&tools=none: a new document without tools
//   hash          only location.hash changes: the SAME document (its tools stay)
//   push-state    history.pushState: the SAME document (its tools stay)
// window.__documentToken is random per document, so a test can tell documents apart.
(() => {
  'use strict';
  EchoDemo.warnIfUnavailable();
  const params = new URLSearchParams(location.search);
  const generation = Number(params.get('gen')) || 1;
  const token = Math.random().toString(36).slice(2, 10);
  window.__documentToken = token;
  document.querySelector('[data-testid="document-token"]').textContent = token;
  document.querySelector('[data-testid="generation"]').textContent = String(generation);
  Object.assign(document.querySelector('[data-testid="document-info"]').dataset, { documentToken: token, generation: String(generation) });

  const KINDS = ['same-page', 'reload', 'cross-origin', 'no-tools', 'hash', 'push-state'];

  function targetOf(kind) {
    const next = new URL(location.href);
    next.hash = '';
    next.searchParams.delete('navigateAfterMs');
    next.searchParams.delete('navigateTo');
    next.searchParams.set('gen', String(generation + 1));
    switch (kind) {
      case 'same-page':
        return next.href;
      case 'no-tools':
        next.searchParams.set('tools', 'none');
        return next.href;
      case 'cross-origin':
        return EchoDemo.config.crossOrigin + next.pathname + next.search;
      case 'reload':
        return location.href;
      case 'hash':
        return `${location.href.split('#')[0]}#step-${generation + 1}`;
      case 'push-state':
        return next.href;
      default:
        throw new TypeError(`kind must be one of ${KINDS.join(', ')}`);
    }
  }

  function go(kind) {
    const url = targetOf(kind);
    if (kind === 'reload') location.reload();
    else if (kind === 'hash') location.hash = url.split('#')[1];
    else if (kind === 'push-state') history.pushState({ generation: generation + 1 }, '', url);
    else location.assign(url);
    return url;
  }

  window.__navigate = (kind = 'same-page', delayMs = 0) => {
    const url = targetOf(kind); // throws on an unknown kind before anything happens
    if (delayMs > 0) setTimeout(() => go(kind), delayMs);
    else go(kind);
    return url;
  };

  for (const el of document.querySelectorAll('[data-kind]')) {
    if (el.tagName === 'A') el.href = targetOf(el.dataset.kind);
    else el.addEventListener('click', () => go(el.dataset.kind));
  }

  (async () => {
    if (params.get('tools') !== 'none') {
      await EchoDemo.registerAll([
        {
          name: 'place_order',
          title: 'Place order',
          description: 'Places an order for one item.',
          inputSchema: {
            type: 'object',
            properties: { item: { type: 'string', minLength: 1 }, quantity: { type: 'integer', minimum: 1, maximum: 10 } },
            required: ['item', 'quantity'],
            additionalProperties: false,
          },
          annotations: { consequentialHint: true },
          // The same descriptor in every generation: only the document differs.
          execute: (args) => ({ ordered: true, item: String(args?.item ?? ''), quantity: Number(args?.quantity), documentToken: token }),
        },
        {
          name: 'navigate_during_execute',
          description: 'Starts a checkout that navigates this tab to a new document while it runs; never answers.',
          inputSchema: { type: 'object', properties: {} },
          annotations: { consequentialHint: true },
          execute: () => {
            setTimeout(() => go('same-page'), 50);
            return new Promise(() => {});
          },
        },
      ]);
    }
    const after = Number(params.get('navigateAfterMs'));
    if (after > 0) setTimeout(() => go(params.get('navigateTo') ?? 'same-page'), after);
    EchoDemo.markReady();
  })();
})();
