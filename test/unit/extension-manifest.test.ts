import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXTENSION_ID } from '../../src/shared/extension-id';

const manifest = JSON.parse(readFileSync(new URL('../../extension/manifest.json', import.meta.url), 'utf8'));

describe('extension manifest', () => {
  it('derives EXTENSION_ID from the key (SHA-256 of the DER public key, first 32 hex digits mapped to a-p)', () => {
    const der = Buffer.from(manifest.key, 'base64');
    const hex = createHash('sha256').update(der).digest('hex').slice(0, 32);
    const id = [...hex].map((h) => String.fromCharCode(97 + parseInt(h, 16))).join('');
    expect(id).toBe(EXTENSION_ID);
  });

  it('asks only for what it uses, never debugger', () => {
    expect(manifest.manifest_version).toBe(3);
    // userScripts: raw JavaScript's USER_SCRIPT world (issue 11 item 3; docs/raw-javascript.md). It gives
    // nothing until the person switches "Allow User Scripts" on for the extension in chrome://extensions.
    expect([...manifest.permissions].sort()).toEqual(['alarms', 'nativeMessaging', 'scripting', 'storage', 'tabs', 'userScripts', 'webNavigation']);
    expect(JSON.stringify(manifest)).not.toMatch(/debugger|cookies|webRequest/);
    // <all_urls>, not http://*/* + https://*/*: chrome.tabs.captureVisibleTab (the target's picture in the
    // dialog, issue 10 item 6) needs it (FACTS); Chrome's install warning is the same "all websites" one.
    expect(manifest.host_permissions).toEqual(['<all_urls>']);
    expect(manifest.content_scripts).toBeUndefined(); // injected only into shared tabs
    expect(manifest.externally_connectable).toBeUndefined();
    expect(manifest.web_accessible_resources).toBeUndefined();
    expect(manifest.content_security_policy.extension_pages).toMatch(/script-src 'self'(;|$)/);
  });

  it('never runs in incognito windows: Chrome cannot even enable it there, so no incognito tab is listed, shared or recorded (issue 12 item 3)', () => {
    // Chrome's manifest key "incognito": "not_allowed" (developer.chrome.com, Manifest - Incognito; Chrome 47+).
    expect(manifest.incognito).toBe('not_allowed');
  });

  it('has no private key anywhere in the extension folder', () => {
    expect(JSON.stringify(manifest)).not.toMatch(/PRIVATE KEY/);
  });
});
