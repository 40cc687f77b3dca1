// The URL policy (src/main/url-policy.ts) against a table of hostile URLs:
// every navigation and window-open of the console goes through decideUrl.
import { describe, expect, it } from 'vitest';
import { decideUrl, isAppUrl, MAX_URL_CHARS, type UrlDenyReason } from '../../src/main/url-policy';

const WEB = { protocol: 'http:', host: '127.0.0.1:43117' };

describe('decideUrl: navigation', () => {
  it.each([
    'app://echo/index.html',
    'app://echo/',
    'app://echo/index.html#/receipts',
  ])('lets the app load %s', (url) => {
    expect(decideUrl(url, 'navigate')).toEqual({ kind: 'allow-app' });
  });

  it('lets the web host load its own origin only', () => {
    expect(decideUrl('http://127.0.0.1:43117/', 'navigate', WEB)).toEqual({ kind: 'allow-app' });
    expect(decideUrl('http://127.0.0.1:43118/', 'navigate', WEB).kind).toBe('deny');
    expect(decideUrl('http://localhost:43117/', 'navigate', WEB).kind).toBe('deny');
  });

  it.each<[string, UrlDenyReason]>([
    ['https://example.com/', 'navigation-away'],
    ['http://example.com/', 'scheme'],
    ['app://evil/index.html', 'scheme'],
    ['app://ECHO/index.html', 'scheme'],
    ['app://user:pw@echo/index.html', 'credentials'],
    ['app://echo:80/index.html', 'scheme'],
    ['file:///etc/passwd', 'scheme'],
    ['javascript:alert(1)', 'scheme'],
    ['data:text/html,<script>alert(1)</script>', 'scheme'],
  ])('denies navigating to %s (%s)', (url, reason) => {
    expect(decideUrl(url, 'navigate')).toEqual({ kind: 'deny', reason });
  });
});

describe('decideUrl: window-open (links to the system browser)', () => {
  it.each([
    ['https://example.com/docs', 'https://example.com/docs'],
    ['https://github.com/echo-console/echo?x=1#y', 'https://github.com/echo-console/echo?x=1#y'],
    ['HTTPS://Example.COM/a', 'https://example.com/a'],
  ])('opens %s externally', (url, normalised) => {
    expect(decideUrl(url, 'window-open')).toEqual({ kind: 'open-external', url: normalised });
  });

  it.each<[unknown, UrlDenyReason]>([
    ['javascript:alert(1)', 'scheme'],
    ['JaVaScRiPt:alert(1)', 'scheme'],
    ['java\nscript:alert(1)', 'control-characters'],
    ['java\tscript:alert(1)', 'control-characters'],
    [' javascript:alert(1)', 'control-characters'],
    ['\u0000https://example.com', 'control-characters'],
    ['https://example.com/\u202egnp.exe', 'control-characters'],
    ['https://exa\u200bmple.com/', 'control-characters'],
    ['vbscript:msgbox(1)', 'scheme'],
    ['data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==', 'scheme'],
    ['file:///C:/Windows/System32/calc.exe', 'scheme'],
    ['file://server/share/evil.exe', 'scheme'],
    ['blob:https://example.com/123', 'scheme'],
    ['filesystem:https://example.com/temporary/x', 'scheme'],
    ['chrome://settings', 'scheme'],
    ['chrome-extension://abcdefghijklmnop/popup.html', 'scheme'],
    ['devtools://devtools/bundled/inspector.html', 'scheme'],
    ['view-source:https://example.com', 'scheme'],
    ['about:blank', 'scheme'],
    ['http://example.com/', 'scheme'],
    ['ftp://example.com/file', 'scheme'],
    ['ws://example.com/', 'scheme'],
    ['mailto:someone@example.com', 'scheme'],
    ['ms-msdt:/id PCWDiagnostic', 'control-characters'],
    ['ms-msdt:/id%20PCWDiagnostic', 'scheme'],
    ['search-ms:query=calc', 'scheme'],
    ['smb://attacker/share', 'scheme'],
    ['vscode://file/etc/passwd', 'scheme'],
    ['zoommtg://zoom.us/join', 'scheme'],
    ['app://echo/index.html', 'app-url-in-new-window'],
    ['https://user:pass@example.com/', 'credentials'],
    ['https://user@example.com/', 'credentials'],
    ['https://example.com@evil.com/', 'credentials'],
    ['https://example.com:8443/', 'port'],
    ['https://127.0.0.1/', 'ip-literal'],
    ['https://2130706433/', 'ip-literal'],
    ['https://0x7f.1/', 'ip-literal'],
    ['https://[::1]/', 'ip-literal'],
    ['https://192.168.1.1/admin', 'ip-literal'],
    ['https://localhost/', 'local-host'],
    ['https://api.localhost/', 'local-host'],
    ['https://printer.local/', 'local-host'],
    ['https://intranet/', 'local-host'],
    ['https://xn--80ak6aa92e.com/', 'punycode-host'],
    ['https://аpple.com/', 'punycode-host'],
    ['https:///nohost', 'local-host'],
    ['not a url', 'control-characters'],
    ['notaurl', 'unparseable'],
    ['//example.com/', 'unparseable'],
    ['', 'unparseable'],
    [`https://example.com/${'a'.repeat(MAX_URL_CHARS)}`, 'too-long'],
    [undefined, 'not-a-string'],
    [{ toString: () => 'https://example.com' }, 'not-a-string'],
  ])('denies %j (%s)', (url, reason) => {
    expect(decideUrl(url, 'window-open')).toEqual({ kind: 'deny', reason });
  });
});

describe('isAppUrl', () => {
  it('matches scheme and host exactly', () => {
    expect(isAppUrl('app://echo/index.html')).toBe(true);
    expect(isAppUrl('app://echo.evil/index.html')).toBe(false);
    expect(isAppUrl('app://evil/echo')).toBe(false);
    expect(isAppUrl('app://u@echo/')).toBe(false);
    expect(isAppUrl('http://127.0.0.1:43117/#token=x', WEB)).toBe(true);
    expect(isAppUrl('http://127.0.0.1:43117.evil.com/', WEB)).toBe(false);
    expect(isAppUrl(null)).toBe(false);
  });
});
