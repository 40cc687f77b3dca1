// The snapshot benchmark's page (issue 10, "Measured"; test/bench/snapshot.bench.ts):
// about 5,000 elements of an ordinary site — a banner with a navigation of
// nested link lists, articles (headings, paragraphs with inline links and
// emphasis, lists, figures, quotes), a sidebar, a form with every input type
// Chromium makes a WebMCP schema of (text, email, tel, url, number, search,
// date, time, datetime-local, month, week, color, range, checkbox, radio,
// select, multi-select, textarea), a data table and a footer.
//
// Deterministic for a seed: `?seed=N` (default 1) seeds a mulberry32
// generator; the same seed builds the same DOM (text, structure, values) in
// every browser and run. `?scale=F` multiplies the number of articles and
// table rows (default 1). Page text only ever goes in with textContent. The
// element count is left in <html data-elements>, and data-ready="true" says
// the page is built.
(() => {
  'use strict';

  const params = new URLSearchParams(location.search);
  const seed = Number.parseInt(params.get('seed') ?? '1', 10) >>> 0;
  const scale = Math.max(0.05, Math.min(20, Number(params.get('scale') ?? '1') || 1));

  /** mulberry32: a small, well-mixed 32-bit PRNG; same seed, same sequence. */
  function mulberry32(a) {
    return () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  const rnd = mulberry32(seed || 1);
  const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));
  const pick = (xs) => xs[Math.floor(rnd() * xs.length)];

  const WORDS = (
    'the of and to in is was for on that with as by at from this be are or it an which have not had were but their has been one ' +
    'river harbour lantern meadow copper orchard signal ledger window garden village market bridge station canal quarry mill ' +
    'winter summer autumn spring morning evening north south east west valley ridge island forest granite cedar willow maple ' +
    'report council budget survey archive museum library theatre festival concert gallery school clinic bakery workshop ' +
    'measured opened closed repaired painted planted counted recorded visited crossed followed described restored announced ' +
    'quiet bright narrow ancient modern early late local public small large careful steady gentle rapid heavy light ' +
    'engineer teacher farmer baker painter keeper mayor pilot sailor writer student neighbour visitor volunteer ' +
    'Ada Grace Alan Edsger Barbara Donald Frances Ken Margaret Radia Tim Vint Leslie Niklaus Hedy Katherine ' +
    'Lisbon Porto Ghent Bergen Tartu Lviv Split Kotor Bled Graz Turku Aarhus Malmö Köln Zürich Kraków Brno Évora'
  ).split(' ');

  const sentence = (lo, hi) => {
    const n = int(lo, hi);
    const w = [];
    for (let i = 0; i < n; i++) w.push(pick(WORDS));
    if (rnd() < 0.15) w.splice(int(0, w.length - 1), 0, String(int(2, 2099)));
    const s = w.join(' ');
    return s.charAt(0).toUpperCase() + s.slice(1) + pick(['.', '.', '.', '!', '?', ';']);
  };
  const title = (lo, hi) => {
    const s = sentence(lo, hi).slice(0, -1);
    return s;
  };

  /** An element with optional attributes and children (strings become text nodes). */
  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs ?? {})) {
      if (v === true) el.setAttribute(k, '');
      else if (v !== false && v != null) el.setAttribute(k, String(v));
    }
    for (const k of kids.flat()) if (k != null) el.append(typeof k === 'string' ? document.createTextNode(k) : k);
    return el;
  }

  /** A paragraph of text with inline links, emphasis, strong and code, as pages have. */
  function paragraph() {
    const p = h('p');
    const n = int(2, 5);
    for (let i = 0; i < n; i++) {
      const r = rnd();
      if (r < 0.2) p.append(h('a', { href: `/bench/ref/${int(1, 9999)}` }, title(1, 4)), ' ');
      else if (r < 0.3) p.append(h('em', null, title(1, 3)), ' ');
      else if (r < 0.38) p.append(h('strong', null, title(1, 3)), ' ');
      else if (r < 0.42) p.append(h('code', null, pick(WORDS) + '()'), ' ');
      p.append(sentence(6, 18) + ' ');
    }
    return p;
  }

  let slug = 0;
  const id = (prefix) => `${prefix}-${++slug}`;

  function banner() {
    const sections = [];
    for (let i = 0; i < 8; i++) {
      const sub = [];
      for (let j = 0, m = int(3, 6); j < m; j++) sub.push(h('li', null, h('a', { href: `/bench/s/${i}/${j}` }, title(1, 3))));
      sections.push(h('li', null, h('a', { href: `/bench/s/${i}` }, title(1, 2)), h('ul', null, sub)));
    }
    return h(
      'header',
      null,
      h('h1', null, `The ${pick(WORDS)} ${pick(WORDS)} gazette`),
      h('nav', { 'aria-label': 'Main' }, h('ul', null, sections)),
      h('search', null, h('form', { role: 'search', action: '/bench/search' }, h('label', null, 'Search the site ', h('input', { type: 'search', name: 'q' })), h('button', null, 'Search'))),
    );
  }

  function article(i) {
    const hid = id('h');
    const a = h('article', { 'aria-labelledby': hid });
    a.append(h('h2', { id: hid }, title(3, 8)));
    a.append(h('p', null, 'By ', h('a', { href: `/bench/author/${int(1, 40)}` }, `${pick(WORDS)} ${pick(WORDS)}`), `, ${int(1, 28)} ${pick(['March', 'April', 'May', 'June'])} ${int(2019, 2026)}`));
    for (let s = 0, sn = int(1, 3); s < sn; s++) {
      if (s > 0) a.append(h('h3', null, title(2, 5)));
      for (let k = 0, pn = int(2, 4); k < pn; k++) a.append(paragraph());
      const r = rnd();
      if (r < 0.3) {
        const items = [];
        for (let k = 0, m = int(3, 7); k < m; k++) items.push(h('li', null, rnd() < 0.3 ? h('a', { href: `/bench/item/${i}/${k}` }, title(2, 4)) : sentence(3, 9)));
        a.append(h(rnd() < 0.5 ? 'ul' : 'ol', null, items));
      } else if (r < 0.45) {
        a.append(h('figure', null, h('img', { alt: title(2, 6), width: 120, height: 80, src: 'data:image/gif;base64,R0lGODlhAQABAAAAACw=' }), h('figcaption', null, sentence(4, 10))));
      } else if (r < 0.55) {
        a.append(h('blockquote', null, h('p', null, sentence(8, 20))));
      }
    }
    const tags = [];
    for (let k = 0, m = int(2, 4); k < m; k++) tags.push(h('li', null, h('a', { href: `/bench/tag/${pick(WORDS)}` }, pick(WORDS))));
    a.append(h('footer', null, h('ul', { 'aria-label': 'Tags' }, tags), h('button', { type: 'button', 'aria-pressed': rnd() < 0.3 ? 'true' : 'false' }, 'Save for later')));
    return a;
  }

  function sidebar() {
    const items = [];
    for (let k = 0; k < 15; k++) items.push(h('li', null, h('a', { href: `/bench/popular/${k}` }, title(2, 6))));
    return h('aside', null, h('h2', null, 'Most read'), h('ol', null, items), h('details', null, h('summary', null, 'About this site'), h('p', null, sentence(10, 25))));
  }

  /** The form: each input type Chromium turns into a WebMCP schema, labelled the usual ways, some with values. */
  function form() {
    const f = h('form', { 'aria-label': 'Account settings', action: '/bench/settings' });
    const lab = (text, input) => h('label', null, text + ' ', input);
    f.append(h('h2', null, 'Account settings'));
    f.append(lab('Full name', h('input', { name: 'name', value: `${pick(WORDS)} ${pick(WORDS)}`, required: true })));
    f.append(lab('Email', h('input', { type: 'email', name: 'email', value: `${pick(WORDS).toLowerCase()}@example.org` })));
    f.append(lab('Phone', h('input', { type: 'tel', name: 'tel', placeholder: '+1 555 0100' })));
    f.append(lab('Website', h('input', { type: 'url', name: 'site', value: 'https://example.org/' })));
    f.append(lab('Age', h('input', { type: 'number', name: 'age', min: 0, max: 130, value: int(18, 90) })));
    f.append(lab('Find a topic', h('input', { type: 'search', name: 'topic' })));
    f.append(lab('Birthday', h('input', { type: 'date', name: 'birthday', value: `19${int(50, 99)}-0${int(1, 9)}-1${int(0, 9)}` })));
    f.append(lab('Alarm', h('input', { type: 'time', name: 'alarm', value: `0${int(5, 9)}:30` })));
    f.append(lab('Next visit', h('input', { type: 'datetime-local', name: 'visit' })));
    f.append(lab('Billing month', h('input', { type: 'month', name: 'month' })));
    f.append(lab('Holiday week', h('input', { type: 'week', name: 'week' })));
    f.append(lab('Theme colour', h('input', { type: 'color', name: 'colour', value: '#3366cc' })));
    f.append(lab('Volume', h('input', { type: 'range', name: 'volume', min: 0, max: 10, value: int(0, 10) })));
    const nid = id('in');
    f.append(h('label', { for: nid }, 'Nickname'), h('input', { id: nid, name: 'nick' }));
    f.append(h('input', { name: 'code', 'aria-label': 'Invitation code' }));
    f.append(lab('Newsletter', h('input', { type: 'checkbox', name: 'news', checked: rnd() < 0.5 })));
    f.append(lab('Accept the terms', h('input', { type: 'checkbox', name: 'terms', required: true })));
    const plans = ['Free', 'Basic', 'Team', 'Enterprise'];
    const chosen = int(0, 3);
    f.append(h('fieldset', null, h('legend', null, 'Plan'), plans.map((p, i) => h('label', null, h('input', { type: 'radio', name: 'plan', value: p.toLowerCase(), checked: i === chosen }), ' ' + p))));
    const cities = WORDS.slice(-18);
    const sel = int(0, cities.length - 1);
    f.append(lab('City', h('select', { name: 'city' }, cities.map((c, i) => h('option', { value: c, selected: i === sel }, c)))));
    f.append(lab('Interests', h('select', { name: 'interests', multiple: true, size: 5 }, ['Music', 'Sport', 'Books', 'Travel', 'Food', 'Film'].map((x, i) => h('option', { selected: i % 2 === 0 }, x)))));
    f.append(lab('About you', h('textarea', { name: 'about', rows: 3 }, sentence(8, 16))));
    f.append(h('button', { type: 'submit' }, 'Save settings'), ' ', h('button', { type: 'reset' }, 'Reset'));
    return f;
  }

  function table(rows) {
    const cols = ['Station', 'Line', 'Opened', 'Platforms', 'Passengers', 'Status'];
    const body = [];
    for (let r = 0; r < rows; r++) {
      body.push(
        h(
          'tr',
          null,
          h('th', { scope: 'row' }, `${pick(WORDS)} ${pick(WORDS)}`),
          h('td', null, pick(['Red', 'Blue', 'Green', 'Yellow', 'Orange'])),
          h('td', null, String(int(1850, 2024))),
          h('td', null, String(int(1, 12))),
          h('td', null, int(1000, 99999).toLocaleString('en-US')),
          h('td', null, rnd() < 0.2 ? h('a', { href: `/bench/station/${r}` }, 'Works planned') : pick(['Open', 'Open', 'Closed at night', 'Step-free'])),
        ),
      );
    }
    return h('table', null, h('caption', null, 'Stations of the network'), h('thead', null, h('tr', null, cols.map((c) => h('th', { scope: 'col' }, c)))), h('tbody', null, body));
  }

  function footer() {
    const links = [];
    for (let k = 0; k < 12; k++) links.push(h('li', null, h('a', { href: `/bench/f/${k}` }, title(1, 3))));
    return h('footer', null, h('ul', null, links), h('p', null, `© ${int(2000, 2026)} ${sentence(4, 8)}`));
  }

  const main = h('main');
  const articles = Math.round(85 * scale);
  for (let i = 0; i < articles; i++) main.append(article(i));
  main.append(form());
  main.append(h('h2', null, 'Timetable'), table(Math.round(250 * scale)));
  document.body.append(banner(), main, sidebar(), footer());
  document.documentElement.dataset.elements = String(document.getElementsByTagName('*').length);
  document.documentElement.dataset.ready = 'true';
})();
