// export_account: a result over 512 KiB with secrets nested deep (see large-result.html).
(() => {
  'use strict';
  EchoDemo.warnIfUnavailable();
  // Seeded, so every load answers the same text (tests compare it).
  let seed = 0x1a5e;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed / 4294967296;
  };
  const pick = (alphabet, n) => Array.from({ length: n }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
  const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const HEX = '0123456789abcdef';
  const uuid = () => `${pick(HEX, 8)}-${pick(HEX, 4)}-4${pick(HEX, 3)}-a${pick(HEX, 3)}-${pick(HEX, 12)}`;
  const digits = (n) => pick('0123456789', n);

  // Secrets, assembled from parts (made up; shaped like the real thing).
  const secrets = {
    sessionId: `sess-${pick(ALNUM, 32)}`,
    githubToken: ['gh', 'p_', pick(ALNUM, 36)].join(''),
    smtpPassword: `Pw-${pick(ALNUM, 14)}`,
    bearer: pick(ALNUM, 40),
    card: '4111111111111111',
    recoveryCode: pick(ALNUM, 24),
  };
  // Ordinary values that must reach the agent unchanged.
  const shareLink = `https://docs.example/d/${pick(ALNUM, 12)}?share=${pick(ALNUM + '-_', 43)}`;
  const orders = Array.from({ length: 400 }, (_, i) => ({
    orderNumber: `${112 + (i % 7)}-${digits(7)}-${digits(7)}`,
    id: uuid(),
    placed: `2026-0${1 + (i % 9)}-1${i % 10}`,
    total: Math.round(rand() * 90000) / 100,
    invoiceSha256: pick(HEX, 64),
    invoice: `https://drive.google.com/file/d/1${pick(ALNUM + '-_', 32)}/view?usp=share_link`,
    note: i % 50 === 0 ? 'Left at the front door; the signature token was the delivery code on the app.' : 'Delivered',
  }));
  let settings = {
    profile: { displayName: 'Ann Example', language: 'en-GB' },
    integrations: {
      github: { connected: true, auth: { token: secrets.githubToken, scopes: ['repo'] } },
      smtp: { host: 'smtp.example.com', port: 587, password: secrets.smtpPassword },
      webhooks: [{ url: 'https://example.com/hooks/orders', headers: [{ value: `Bearer ${secrets.bearer}`, name: 'Authorization' }, { name: 'Accept', value: 'application/json' }] }],
      billing: { cardOnFile: secrets.card, brand: 'visa' },
      recovery: { codes: { primary: { secret: secrets.recoveryCode } } },
    },
  };
  for (let d = 0; d < 30; d++) settings = { [`group${d}`]: settings, label: `Group ${d}` };
  const history = Array.from({ length: 6000 }, (_, i) => ({ at: 1767225600000 + i * 60000, page: `/orders?page=${i % 40}`, ua: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Safari/537.36' }));
  const thumbnail = `data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABAAAAAQ${pick(ALNUM + '+/', 600)}==`;
  const result = {
    account: { id: uuid(), owner: 'Ann Example', shareLink },
    session: { id: secrets.sessionId, history },
    orders,
    settings,
    thumbnail,
    footer: `End of export: ${orders.length} orders.`,
  };
  const text = JSON.stringify(result);
  document.querySelector('[data-testid="result-bytes"]').textContent = String(new TextEncoder().encode(text).length);
  // For tests: the secrets, where they sit, and the ordinary values (the page's own record, not a hint to the agent).
  window.__largeResult = { secrets, text, ordinary: { shareLink, orders, thumbnail, footer: result.footer } };

  void EchoDemo.registerAll([
    {
      name: 'export_account',
      description: 'Exports the account: session, orders and settings, as JSON (about 800 KiB).',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      annotations: { readOnlyHint: true },
      execute: () => result,
    },
  ]).then(() => EchoDemo.markReady());
})();
