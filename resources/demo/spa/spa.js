// A single-page app whose tools act on the item its route shows (see index.html).
(() => {
  'use strict';
  EchoDemo.warnIfUnavailable();
  const ITEMS = [
    { n: 1, uuid: '3f9a2c4e-8b1d-4e6f-9a0b-1c2d3e4f5a61', name: 'Invoice draft' },
    { n: 2, uuid: '7b1e5d20-4c3a-4f8e-b2d1-9e8f7a6b5c42', name: 'Quarterly report' },
    { n: 3, uuid: 'c2d4e6f8-1a3b-4c5d-8e9f-0a1b2c3d4e53', name: 'Holiday photos' },
  ];
  const deleted = [];
  let churn = null;

  /** The item the route shows now: a path UUID, ?item=n, ?ticket=n, or #/items/n. */
  function current() {
    const path = /^\/spa\/items\/([0-9a-f-]{36})$/.exec(location.pathname);
    if (path) return ITEMS.find((i) => i.uuid === path[1]) ?? null;
    const q = new URLSearchParams(location.search);
    const n = Number(q.get('item') ?? q.get('ticket') ?? (/^#\/items\/(\d+)$/.exec(location.hash) ?? [])[1]);
    return ITEMS.find((i) => i.n === n) ?? null;
  }

  function render() {
    const c = current();
    const h = document.querySelector('[data-testid="current"]');
    h.textContent = c ? `Item ${c.n}: ${c.name}` : 'No item';
    h.dataset.item = c ? String(c.n) : '';
    const ul = document.querySelector('[data-testid="items"]');
    ul.replaceChildren(...ITEMS.map((i) => {
      const li = document.createElement('li');
      li.dataset.testid = `item-${i.n}`;
      li.dataset.deleted = String(deleted.includes(i.n));
      li.textContent = `${i.n}. ${i.name}${deleted.includes(i.n) ? ' (deleted)' : ''}`;
      return li;
    }));
  }

  /** Go to `url` in the same document, as the app's own links do. */
  function go(url) {
    if (url.startsWith('#')) location.hash = url;
    else history.pushState({}, '', url);
    render();
  }

  const nav = document.querySelector('[data-testid="routes"]');
  for (const i of ITEMS) {
    for (const [label, url] of [[`uuid ${i.n}`, `/spa/items/${i.uuid}`], [`?item=${i.n}`, `/spa/?item=${i.n}`], [`?ticket=${i.n}`, `/spa/?ticket=${i.n}`], [`#/items/${i.n}`, `#/items/${i.n}`]]) {
      const a = document.createElement('a');
      a.href = url;
      a.textContent = label;
      a.addEventListener('click', (e) => { e.preventDefault(); go(url); });
      nav.append(a, ' ');
    }
  }
  window.addEventListener('popstate', render);
  window.addEventListener('hashchange', render);

  window.__spa = Object.freeze({
    items: ITEMS,
    go,
    deleted: () => [...deleted],
    current: () => current()?.n ?? null,
    /** Rewrite the URL's fragment every `ms` (a page that never holds still), until stopChurn(). */
    startChurn(ms = 50) {
      let k = 0;
      clearInterval(churn);
      churn = setInterval(() => history.replaceState({}, '', `${location.pathname}${location.search}#t=${++k}`), ms);
    },
    stopChurn() { clearInterval(churn); churn = null; },
  });

  render();
  void EchoDemo.registerAll([
    {
      name: 'current_item',
      title: 'Current item',
      description: 'The item the page shows now.',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      annotations: { readOnlyHint: true },
      execute: () => { const c = current(); return c ? { n: c.n, name: c.name } : { error: 'no_item' }; },
    },
    {
      name: 'delete_current_item',
      title: 'Delete this item',
      description: 'Deletes the item the page shows now.',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      annotations: { destructiveHint: true },
      execute: () => {
        const c = current();
        if (!c) return { error: 'no_item' };
        if (!deleted.includes(c.n)) deleted.push(c.n);
        render();
        return { deleted: c.n, name: c.name };
      },
    },
  ]).then(() => EchoDemo.markReady());
})();
