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
