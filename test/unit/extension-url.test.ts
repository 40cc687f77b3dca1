import { describe, expect, it } from 'vitest';
import { isSecretParamName, originOf, shareability, stripUrl, MAX_URL_CHARS } from '../../src/shared/url';

describe('stripUrl', () => {
  it.each([
    ['https://user:pw@shop.example/a?q=1', 'https://shop.example/a?q=1'],
    ['https://shop.example/cb?code=abc&state=xyz&page=2', 'https://shop.example/cb?page=2'],
    ['https://a.example/?token=t&access_token=a&key=k&sig=s&signature=s2&session=x&auth=y&password=p&keep=1', 'https://a.example/?keep=1'],
    ['https://a.example/?X-Amz-Signature=1&X-Amz-Credential=2&X-Amz-Security-Token=3&csrf_token=4&id=7', 'https://a.example/?id=7'],
    ['https://a.example/?TOKEN=1&Api_Key=2', 'https://a.example/'],
    ['https://a.example/app#access_token=abc&token_type=bearer&expires_in=3600', 'https://a.example/app#expires_in=3600'],
    ['https://a.example/doc#section-2', 'https://a.example/doc#section-2'],
    ['http://127.0.0.1:8765/x', 'http://127.0.0.1:8765/x'],
    ['about:blank', 'about:blank'],
    ['data:text/html,<script>secret</script>', 'data:…'],
    ['javascript:alert(1)', 'javascript:…'],
    ['not a url', ''],
  ])('%s → %s', (input, out) => {
    expect(stripUrl(input)).toBe(out);
  });

  it('never lets a secret through, whatever the case or position', () => {
    const out = stripUrl('https://u:SECRETPW@a.example/p?a=1&Session_Id=SECRET1&x=2#jwt=SECRET2');
    expect(out).not.toMatch(/SECRET/);
  });

  it('replaces secrets the redaction rules know in path segments and in parameters with innocent names (issue 9 item 13), and keeps ordinary ids and share links', () => {
    const jwt = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';
    const gh = 'ghp_0123456789abcdefghijABCDEFGHIJ012345';
    const cases: Array<[string, string]> = [
      [`https://a.example/reset/${jwt}?x=1`, 'https://a.example/reset/[redacted:jwt]?x=1'],
      [`https://a.example/p?x=${jwt}&q=shoes`, 'https://a.example/p?x=[redacted:jwt]&q=shoes'],
      [`https://a.example/k/${gh}/view`, 'https://a.example/k/[redacted:api-key]/view'],
      ['https://a.example/k?aws=AKIAIOSFODNN7EXAMPLE', 'https://a.example/k?aws=[redacted:api-key]'],
      [`https://a.example/app#state=ok&x=${gh}`, 'https://a.example/app#x=[redacted:api-key]'],
    ];
    for (const [input, out] of cases) {
      expect(stripUrl(input), input).toBe(out);
      expect(stripUrl(input)).not.toContain(jwt.slice(40, 70));
      expect(stripUrl(input)).not.toContain(gh.slice(4));
    }
    // What the person needs to recognise the page stays: share links, UUIDs, commits, order numbers.
    for (const keep of [
      'https://docs.example/d/1AbCdEfGhIjKlMnOpQrStUvWxYz0123456789/edit?share=Xy7Pq2LmN9aB&usp=sharing',
      'https://a.example/items/550e8400-e29b-41d4-a716-446655440000?ref=home',
      'https://git.example/org/repo/commit/9fceb02d0ae598e95dc970b74767f19372d61af8',
      'https://shop.example/orders/ORD-2026-004518?tab=items',
    ]) expect(stripUrl(keep)).toBe(keep);
  });

  it('caps the length', () => {
    const out = stripUrl(`https://a.example/${'x'.repeat(5000)}`);
    expect(out.length).toBe(MAX_URL_CHARS);
    expect(out.endsWith('…')).toBe(true);
  });

  it('knows token-like names', () => {
    for (const n of ['token', 'refresh_token', 'client_secret', 'oauth_verifier', 'passwd', 'pwd', 'apikey', 'code']) expect(isSecretParamName(n)).toBe(true);
    for (const n of ['q', 'page', 'id', 'lang', 'sort']) expect(isSecretParamName(n)).toBe(false);
  });
});

describe('shareability', () => {
  it.each([
    ['https://shop.example/', true, undefined],
    ['http://127.0.0.1:8080/', true, undefined],
    ['chrome://settings', false, 'browser-page'],
    ['chrome-extension://abc/popup.html', false, 'extension-page'],
    ['https://chromewebstore.google.com/detail/x', false, 'web-store'],
    ['https://chrome.google.com/webstore/detail/x', false, 'web-store'],
    ['https://chrome.google.com/search', true, undefined],
    ['file:///etc/passwd', false, 'file'],
    ['about:blank', false, 'browser-page'],
    ['view-source:https://a.example/', false, 'browser-page'],
    ['devtools://devtools/bundled/inspector.html', false, 'browser-page'],
    ['data:text/html,x', false, 'not-http'],
    ['', false, 'invalid-url'],
  ])('%s → %s', (url, ok, reason) => {
    const v = shareability(url);
    expect(v.ok).toBe(ok);
    if (!v.ok) expect(v.reason).toBe(reason);
  });

  it('computes origins, opaque ones as "null"', () => {
    expect(originOf('https://a.example:8443/x?y')).toBe('https://a.example:8443');
    expect(originOf('about:blank')).toBe('null');
    expect(originOf('data:x')).toBe('null');
    expect(originOf(undefined)).toBe('null');
  });
});
