#!/usr/bin/env node
/**
 * Generates the redaction corpus (README.md beside this file): ordinary tool
 * results that must come back unchanged (ordinary.jsonl) and real-shaped
 * secrets that must be hidden (positives.jsonl). Seeded (mulberry32), so the
 * output is the same on every run: `node test/vectors/redaction-corpus/generate.mjs`.
 *
 * Every secret here is random or a provider's documented example shape; none
 * is a real credential. Shapes follow each provider's published format (see
 * the comments), and contexts vary (prose, JSON text, headers, logs, HTML) so
 * that the corpus does not fit one template.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const PER_CATEGORY = 80;

let seed = 0x5eed_2026;
function rand() {
  seed |= 0;
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
const pick = (a) => a[Math.floor(rand() * a.length)];
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = LOWER.toUpperCase();
const DIGITS = '0123456789';
const HEX = '0123456789abcdef';
const ALNUM = LOWER + UPPER + DIGITS;
const B64 = ALNUM + '+/';
const B64URL = ALNUM + '-_';
const str = (alphabet, n) => Array.from({ length: n }, () => pick(alphabet)).join('');
const digits = (n) => str(DIGITS, n);
const hex = (n) => str(HEX, n);
const bytes = (n) => Uint8Array.from({ length: n }, () => int(0, 255));
const b64 = (u8) => Buffer.from(u8).toString('base64');
const b64url = (s) => Buffer.from(s).toString('base64url');
const uuid4 = () => {
  const h = hex(32).split('');
  h[12] = '4';
  h[16] = pick('89ab');
  const s = h.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
};
const words = 'quarterly report design review budget roadmap onboarding invoice travel plan meeting notes launch checklist hiring pipeline customer feedback sprint retro brand guide pricing model'.split(' ');
const slug = (n) => Array.from({ length: n }, () => pick(words)).join('-');
const title = (n) => slug(n).split('-').map((w) => w[0].toUpperCase() + w.slice(1)).join(' ');
const names = ['Ann', 'Bruno', 'Chen Wei', 'Dara', 'Émile', 'Farah', 'Gus', 'Hana', 'Ivo', 'Jo', 'Kemal', 'Lucía', 'Mei', 'Nils', 'Olu', 'Priya'];
const isoDate = () => `2026-${String(int(1, 12)).padStart(2, '0')}-${String(int(1, 28)).padStart(2, '0')}`;

/** Wrap a value the way tool results arrive: plain, in a sentence, or as JSON text. */
function context(value, key, extra = {}) {
  switch (int(0, 4)) {
    case 0:
      return value;
    case 1:
      return `${pick(['Here is', 'I found', 'Copied', 'Result:', 'See'])} ${value} ${pick(['for you.', '(opened just now).', '— let me know.', ''])}`.trim();
    case 2:
      return JSON.stringify({ [key]: value, ...extra });
    case 3:
      return JSON.stringify({ ok: true, items: [{ name: title(2), [key]: value, updated: isoDate() }] }, null, 2);
    default:
      return `${title(2)}\n${key}: ${value}\nupdated ${isoDate()}`;
  }
}

// ---------------------------------------------------------------------------
// Ordinary results

const urlMakers = [
  () => `https://docs.google.com/document/d/1${str(B64URL, 43)}/edit?usp=sharing`,
  () => `https://docs.google.com/spreadsheets/d/1${str(B64URL, 43)}/edit#gid=${int(0, 2e9)}`,
  () => `https://drive.google.com/file/d/1${str(B64URL, 32)}/view?usp=share_link`,
  () => `https://drive.google.com/drive/folders/1${str(B64URL, 32)}?usp=sharing`,
  () => `https://www.dropbox.com/scl/fi/${str(LOWER + DIGITS, 25)}/${title(2).replace(/ /g, '-')}.pdf?rlkey=${str(LOWER + DIGITS, 25)}&dl=0`,
  () => `https://www.dropbox.com/s/${str(LOWER + DIGITS, 15)}/${slug(2)}.zip?dl=0`,
  () => `https://www.figma.com/file/${str(ALNUM, 22)}/${title(2).replace(/ /g, '-')}?type=design&node-id=${int(1, 900)}-${int(1, 9000)}&t=${str(ALNUM, 16)}-0`,
  () => `https://www.figma.com/design/${str(ALNUM, 22)}/${slug(2)}?node-id=${int(1, 99)}-${int(1, 999)}&m=dev`,
  () => `https://docs.example/d/${str(ALNUM, 12)}?share=${str(B64URL, 43)}`,
  () => `https://app.example.com/join?invite=${str(B64URL, int(32, 48))}`,
  () => `https://www.notion.so/${title(3).replace(/ /g, '-')}-${hex(32)}?pvs=4`,
  () => `https://app.box.com/s/${str(LOWER + DIGITS, 32)}`,
  () => `https://1drv.ms/w/s!${str(B64URL, 34)}?e=${str(ALNUM, 6)}`,
  () => `https://miro.com/app/board/uXjV${str(ALNUM, 6)}=/?share_link_id=${digits(12)}`,
  () => `https://github.com/${pick(['acme', 'octo-org', 'nils'])}/${slug(1)}/commit/${hex(40)}`,
  () => `https://github.com/${pick(['acme', 'octo-org'])}/${slug(1)}/pull/${int(1, 9999)}#discussion_r${digits(10)}`,
  () => `https://www.youtube.com/watch?v=${str(B64URL, 11)}&t=${int(1, 600)}s`,
  () => `https://meet.google.com/${str(LOWER, 3)}-${str(LOWER, 4)}-${str(LOWER, 3)}`,
  () => `https://calendly.com/${pick(names).toLowerCase().replace(/ /g, '')}/30min?month=2026-0${int(1, 9)}`,
  () => `https://shop.example.com/orders/${uuid4()}/invoice.pdf`,
  () => `https://www.amazon.com/dp/B0${str(UPPER + DIGITS, 8)}?ref_=${str(LOWER + '_', 10)}&th=1`,
  () => `https://app.example.io/reset/confirm?share_id=${str(B64URL, 40)}&lang=en`,
  () => `https://cdn.example.net/assets/${hex(20)}/${slug(1)}.${hex(8)}.js`,
  () => `https://photos.app.goo.gl/${str(ALNUM, 17)}`,
  () => `https://we.tl/t-${str(ALNUM, 10)}`,
  () => `https://join.slack.com/t/${slug(1)}/shared_invite/zt-${str(LOWER + DIGITS, 10)}-${str(ALNUM + '_', 22)}`,
];

const hashMakers = [
  () => hex(40),
  () => hex(64),
  () => hex(32),
  () => hex(7),
  () => `commit ${hex(40)}\nAuthor: ${pick(names)} <${pick(names).toLowerCase().replace(/\W/g, '')}@example.com>\n\n    ${title(3)}`,
  () => `${hex(64)}  ${slug(2)}.tar.gz`,
  () => `ETag: "${hex(32)}"`,
  () => `ETag: W/"${hex(int(4, 6))}-${str(ALNUM + '/+', 27)}"`,
  () => `sha256:${hex(64)}`,
  () => `sha384-${b64(bytes(48))}`,
  () => `sha512-${b64(bytes(64))}`,
  () => `Digest: sha-256=${b64(bytes(32))}`,
  () => `"integrity": "sha512-${b64(bytes(64))}"`,
  () => `Merge pull request #${int(1, 9999)} from ${slug(1)}/${slug(1)} (${hex(7)}..${hex(7)})`,
  () => `md5 ${hex(32)}`,
  () => `0x${hex(64)}`,
  () => `tx 0x${hex(64)} in block ${int(1e7, 2e7)}`,
  () => `SHA1 (${slug(1)}.iso) = ${hex(40)}`,
];

const mime = ['png', 'jpeg', 'gif', 'webp', 'svg+xml'];
const magic = { png: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], jpeg: [0xff, 0xd8, 0xff, 0xe0], gif: [0x47, 0x49, 0x46, 0x38, 0x39, 0x61], webp: [0x52, 0x49, 0x46, 0x46], 'svg+xml': [] };
function dataUrl() {
  const m = pick(mime);
  const body = m === 'svg+xml'
    ? Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${int(8, 64)}" height="${int(8, 64)}"><rect fill="#${hex(6)}" width="100%" height="100%"/></svg>`).toString('base64')
    : b64(Uint8Array.from([...magic[m], ...bytes(int(40, 1500))]));
  return `data:image/${m};base64,${body}`;
}
const imageMakers = [
  () => dataUrl(),
  () => `<img alt="${title(2)}" src="${dataUrl()}">`,
  () => JSON.stringify({ thumbnail: dataUrl(), width: int(16, 256) }),
  () => `![${title(1)}](${dataUrl()})`,
  () => `.icon { background-image: url("${dataUrl()}"); }`,
];

const orderMakers = [
  () => `${int(100, 119)}-${digits(7)}-${digits(7)}`, // Amazon
  () => `${digits(2)}-${digits(5)}-${digits(5)}`, // eBay
  () => `#${int(1001, 99999)}`, // Shopify
  () => `200${digits(12)}`, // Walmart, 15 digits
  () => `9120${digits(11)}`, // Target, 15 digits
  () => `BBY01-${digits(12)}`, // Best Buy
  () => `W${digits(10)}`, // Apple Store
  () => `ORD-2026-${digits(6)}`,
  () => `81${digits(14)}`, // AliExpress, 16 digits
  () => `1Z${str(UPPER + DIGITS, 6)}${digits(10)}`, // UPS tracking
  () => `${digits(12)}`, // FedEx tracking
  () => `9400 ${digits(4)} ${digits(4)} ${digits(4)} ${digits(4)} ${digits(2)}`, // USPS
  () => `INV-${digits(5)}`,
  () => `${str(UPPER, 6)}`, // airline booking reference (PNR)
  () => `${digits(3)}-${digits(10)}`, // airline e-ticket
];
function orderItem() {
  const v = pick(orderMakers)();
  switch (int(0, 3)) {
    case 0:
      return `Order ${v} placed on ${isoDate()}, ${int(1, 5)} item(s), total $${int(5, 900)}.${digits(2)}`;
    case 1:
      return JSON.stringify({ orderNumber: v, status: pick(['shipped', 'processing', 'delivered']), total: Number(`${int(5, 900)}.${digits(2)}`) });
    case 2:
      return `Your ${pick(['order', 'booking', 'shipment', 'invoice'])} ${v} is confirmed.`;
    default:
      return `${pick(['Tracking', 'Confirmation', 'Reference'])} number: ${v}`;
  }
}

const prose = [
  'Each token costs a fraction of a cent; long prompts use more tokens than short ones.',
  'Forgot your password? We will send a reset link to the address on file.',
  'The secret to a crisp crust is a very hot oven and a little patience.',
  'Session: Thursday afternoon, room 4B, bring the printed agenda.',
  'The bearer of this letter is authorised to collect the parcel on my behalf.',
  'Basic plan includes 3 projects, 10 GB of storage and email support.',
  'Key takeaways: ship smaller changes, review them sooner, and measure the result.',
  'Call us at +1 (415) 555-0132 or +44 20 7946 0958 between 9:00 and 17:00.',
  'Meeting moved to 2026-03-14 at 10:30 CET; the dial-in number is unchanged.',
  'Grüße aus München! Das Passwort für das WLAN hängt an der Küchentür.',
  'Our API returns paginated results; pass the cursor from the previous page to continue.',
  'Price: 1,299.00 EUR including VAT, delivery in 3-5 working days.',
  'ISBN 978-3-16-148410-0, 2nd edition, 412 pages, paperback.',
  'The PIN pad on the terminal is broken, please pay at the counter.',
  'Pinned: welcome thread, house rules and the weekly schedule.',
  'Authorization from your manager is required before booking travel over $500.',
  'To rotate credentials, open Settings, then Security, then choose Rotate keys.',
  'Cookie policy: we use strictly necessary cookies and, with consent, analytics.',
  'max_tokens=512&temperature=0.7&top_p=0.9 gave the most stable answers.',
  'The build took 4m 12s; 1,842 tests passed, 3 were skipped.',
  'She scored 92 out of 100 and finished the 10 km run in 47:31.',
  'Version 4.18.2 fixes a crash when the window is resized during upload.',
  'Population: 8,804,190 (2020 census); area 783.8 km².',
  'Flight LH 431 departs at 13:55 from gate B44, boarding at 13:15.',
  'Invoice due within 30 days; late payments incur a 2% monthly fee.',
  'He whispered the secret password, and the door to the clubhouse swung open.',
  'Tokens of appreciation were handed out to every volunteer at the event.',
  'Open source licences such as MIT and Apache-2.0 permit commercial use.',
  'The museum is closed on Mondays; tickets are €14, reduced €9.',
  'Step 3: paste the share link into the invite dialog and press Send.',
  'Temperature today: high of 21°C, low of 12°C, light wind from the west.',
  'The API key field is optional for the free tier and required for Pro.',
  'See section 4.2.1 of the handbook for the expense policy.',
  'Lunch order: two falafel wraps, one soup of the day, three lemonades.',
  'Results 1–20 of 1,204 for "standing desk" sorted by relevance.',
  'The session expired after 30 minutes of inactivity; sign in again to continue.',
];
function proseItem() {
  const n = int(1, 3);
  const parts = Array.from({ length: n }, () => pick(prose));
  return int(0, 4) === 0 ? JSON.stringify({ content: [{ type: 'text', text: parts.join(' ') }] }) : parts.join(' ');
}

const ordinary = {
  url: () => context(pick(urlMakers)(), pick(['url', 'link', 'shareUrl', 'href', 'webViewLink'])),
  uuid: () => context(pick([uuid4, () => uuid4().toUpperCase(), () => `{${uuid4().toUpperCase()}}`, () => uuid4().replace(/-/g, '')])(), pick(['id', 'requestId', 'uuid', 'correlation_id', 'Request ID'])),
  hash: () => context(pick(hashMakers)(), pick(['sha', 'checksum', 'etag', 'commit', 'digest', 'revision'])),
  'base64-image': () => pick(imageMakers)(),
  'order-number': () => orderItem(),
  prose: () => proseItem(),
};

// ---------------------------------------------------------------------------
// Positives: `secrets` lists the substrings that must not survive.

function luhnComplete(prefix, length) {
  let body = prefix + digits(length - prefix.length - 1);
  for (let d = 0; d <= 9; d++) {
    const s = body + d;
    let sum = 0;
    for (let i = 0; i < s.length; i++) {
      let x = Number(s[s.length - 1 - i]);
      if (i % 2 === 1) x = x * 2 > 9 ? x * 2 - 9 : x * 2;
      sum += x;
    }
    if (sum % 10 === 0) return s;
  }
  return body;
}
const jwt = () => `${b64url(JSON.stringify({ alg: pick(['HS256', 'RS256', 'ES256']), typ: 'JWT' }))}.${b64url(JSON.stringify({ sub: digits(8), name: pick(names), iat: int(1.7e9, 1.8e9) }))}.${str(B64URL, 43)}`;
const pem = (kind) => `-----BEGIN ${kind}PRIVATE KEY-----\n${b64(bytes(48))}\n${b64(bytes(48))}\n${b64(bytes(20))}\n-----END ${kind}PRIVATE KEY-----`;
const positiveMakers = [
  () => { const s = `sk-proj-${str(ALNUM + '_-', 48)}`; return [`OPENAI_API_KEY=${s}`, [s]]; },
  () => { const s = `sk-ant-api03-${str(ALNUM + '_-', 86)}AA`; return [`Using key ${s} for the batch`, [s]]; },
  () => { const s = `sk_live_${str(ALNUM, 24)}`; return [JSON.stringify({ stripe: { mode: 'live', key: s } }), [s]]; },
  () => { const s = `ghp_${str(ALNUM, 36)}`; return [`git clone https://${s}@github.com/acme/app.git`, [s]]; },
  () => { const s = `github_pat_11${str(UPPER + DIGITS, 20)}_${str(ALNUM, 59)}`; return [`token ${s}`, [s]]; },
  () => { const s = `glpat-${str(ALNUM + '_-', 20)}`; return [`GITLAB_TOKEN: ${s}`, [s]]; },
  () => { const s = `xoxb-${digits(12)}-${digits(13)}-${str(ALNUM, 24)}`; return [`SLACK_BOT=${s}`, [s]]; },
  () => { const id = `AKIA${str(UPPER + DIGITS, 16)}`; const sec = str(ALNUM + '/+', 40); return [`[default]\naws_access_key_id = ${id}\naws_secret_access_key = ${sec}`, [id, sec]]; },
  () => { const s = `AIza${str(ALNUM + '_-', 35)}`; return [`<script src="https://maps.googleapis.com/maps/api/js?key=${s}"></script>`, [s]]; },
  () => { const s = jwt(); return [`Authorization: Bearer ${s}`, [s]]; },
  () => { const s = jwt(); return [JSON.stringify({ id_token: s, expires_in: 3600 }), [s]]; },
  () => { const s = jwt(); return [`the session jwt is ${s}`, [s]]; },
  () => { const s = str(ALNUM, int(24, 40)); return [`curl -H "Authorization: Bearer ${s}" https://api.example.com/v2/me`, [s]]; },
  () => { const s = b64(Buffer.from(`${pick(names).toLowerCase()}:${str(ALNUM, 12)}`)); return [`Authorization: Basic ${s}`, [s]]; },
  () => { const s = pem(pick(['', 'RSA ', 'EC ', 'OPENSSH '])); return [s, [s.split('\n')[1]]]; },
  () => { const s = str(ALNUM + '!#%', int(10, 18)); return [JSON.stringify({ user: pick(names), password: s }), [s]]; },
  () => { const s = str(ALNUM, int(10, 18)); return [JSON.stringify({ account: { login: pick(names), credentials: { user: 'x', pass: s } } }, null, 2), [s]]; },
  () => { const s = str(ALNUM, 32); return [`Cookie: sessionid=${s}; csrftoken=${str(ALNUM, 32)}`, [s]]; },
  () => { const s = str(ALNUM, 26); return [`Set-Cookie: __Host-sid=${s}; Path=/; Secure; HttpOnly`, [s]]; },
  () => { const s = str(ALNUM, int(8, 16)); return [`postgres://app:${s}@db.internal:5432/main`, [s]]; },
  () => { const s = str(ALNUM, int(8, 16)); return [`Connect with mongodb+srv://admin:${s}@cluster0.example.mongodb.net/test`, [s]]; },
  () => { const s = luhnComplete('4', 16); return [`Card on file: ${s.replace(/(\d{4})(?=\d)/g, '$1 ')}`, [s.slice(0, 8), s.slice(8)]]; },
  () => { const s = luhnComplete(pick(['51', '52', '53', '54', '55', '2221']), 16); return [JSON.stringify({ payment: { card: { number: s, exp: '09/29' } } }), [s]]; },
  () => { const s = luhnComplete(pick(['34', '37']), 15); return [`Amex ${s.slice(0, 4)}-${s.slice(4, 10)}-${s.slice(10)}`, [s.slice(4, 10)]]; },
  () => { const s = hex(40); return [JSON.stringify({ client_id: `${digits(6)}.apps.example.com`, client_secret: s }), [s]]; },
  () => { const s = str(ALNUM, 32); return [`X-Api-Key: ${s}`, [s]]; },
  () => { const s = digits(6); return [`Your one-time code. OTP: ${s}`, [s]]; },
  () => { const s = str(ALNUM, 40); return [JSON.stringify({ data: { session: { id: s, user: pick(names) } } }), [s]]; },
  () => { const s = str(ALNUM, 24); return [`https://api.example.com/v1/export?format=csv&access_token=${s}`, [s]]; },
  () => { const s = str(ALNUM + '/+', 40); return [`export AWS_SECRET_ACCESS_KEY="${s}"`, [s]]; },
  () => { const s = str(ALNUM, 20); return [JSON.stringify([{ name: 'Authorization', value: `Token ${s}` }, { name: 'Accept', value: 'application/json' }]), [s]]; },
  () => { const s = str(LOWER, int(8, 14)); return [`password: ${s}`, [s]]; },
];
function positive() {
  return pick(positiveMakers)();
}

// ---------------------------------------------------------------------------

const lines = [];
for (const [category, make] of Object.entries(ordinary)) {
  const seen = new Set();
  for (let i = 0; lines.filter((l) => l.category === category).length < PER_CATEGORY; i++) {
    const text = make();
    if (seen.has(text)) continue;
    seen.add(text);
    const n = seen.size - 1;
    lines.push({ id: `${category}-${String(n).padStart(3, '0')}`, category, split: n % 2 === 0 ? 'dev' : 'heldout', text });
  }
}
writeFileSync(join(here, 'ordinary.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');

const pos = [];
for (let n = 0; n < 2 * PER_CATEGORY; n++) {
  const [text, secrets] = positive();
  pos.push({ id: `secret-${String(n).padStart(3, '0')}`, category: 'secret', split: n % 2 === 0 ? 'dev' : 'heldout', text, secrets });
}
writeFileSync(join(here, 'positives.jsonl'), pos.map((l) => JSON.stringify(l)).join('\n') + '\n');
process.stdout.write(`ordinary: ${lines.length} lines; positives: ${pos.length} lines\n`);
