/**
 * The console renderer's Content-Security-Policy, in one place for both hosts
 * (Electron: response header through `session.webRequest.onHeadersReceived` and
 * the protocol handler; loopback web host: response header) and mirrored by the
 * `<meta http-equiv>` tag in src/renderer/index.html (a unit test keeps them equal).
 *
 * Why each directive (Electron security checklist item 7, "Define a Content
 * Security Policy"; CSP Level 3):
 * - `default-src 'self'`: nothing from elsewhere, no CDN, no external fonts.
 * - `script-src 'self'`: no inline script, no `eval` (page text shown in the
 *   dialog can never become script even if it were parsed as HTML).
 * - `style-src 'self'`: one bundled stylesheet; React's `style` props go through
 *   the CSSOM, which CSP does not block.
 * - `object-src 'none'`, `base-uri 'none'`, `form-action 'none'`,
 *   `frame-src 'none'`, `frame-ancestors 'none'`, `worker-src 'none'`: none is used.
 * - `connect-src 'self'` (+ the web host's own `ws://127.0.0.1:PORT`): the
 *   renderer talks to its own host only.
 * - `img-src 'self' blob:`: a hostile `<img src=x onerror>` in page text stays text
 *   anyway; if it ever became markup it could not reach the network. `blob:`
 *   is for the target's picture in the approval dialog (issue 10 item 6): the
 *   renderer makes a blob URL of the PNG bytes its own host handed it
 *   (ConsoleApi.getTargetPicture); a blob URL can only name an object this
 *   renderer created, never the network, and `data:` stays refused.
 */

/** Directives, in order; extra `connect-src` sources are appended by `buildCsp`. */
const BASE: ReadonlyArray<[string, string[]]> = [
  ['default-src', ["'self'"]],
  ['script-src', ["'self'"]],
  ['style-src', ["'self'"]],
  ['img-src', ["'self'", 'blob:']],
  ['font-src', ["'self'"]],
  ['connect-src', ["'self'"]],
  ['object-src', ["'none'"]],
  ['base-uri', ["'none'"]],
  ['form-action', ["'none'"]],
  ['frame-src', ["'none'"]],
  ['worker-src', ["'none'"]],
  ['frame-ancestors', ["'none'"]],
];

/**
 * The CSP header value.
 * @param extraConnect additional `connect-src` sources, e.g. `ws://127.0.0.1:43117`
 *   for the web host's WebSocket (each must be a plain origin, no spaces or `;`).
 * @throws Error when an extra source could inject a directive.
 */
export function buildCsp(extraConnect: string[] = []): string {
  for (const s of extraConnect) {
    if (!/^(ws|wss|http|https):\/\/[A-Za-z0-9.[\]:-]+$/.test(s)) throw new Error(`unsafe connect-src source: ${s}`);
  }
  return BASE.map(([name, values]) => `${name} ${(name === 'connect-src' ? [...values, ...extraConnect] : values).join(' ')}`).join('; ');
}

/** The CSP text of the renderer's `<meta>` tag: the same policy minus `frame-ancestors`, which meta tags ignore. */
export function metaCsp(): string {
  return buildCsp()
    .split('; ')
    .filter((d) => !d.startsWith('frame-ancestors'))
    .join('; ');
}

/** Headers both hosts add to every renderer response, besides the CSP. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'X-Frame-Options': 'DENY',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), usb=(), serial=(), hid=(), payment=()',
};
