/**
 * The Echo Console extension's fixed ID. extension/manifest.json carries a
 * `"key"` (the base64 DER SubjectPublicKeyInfo of an RSA-2048 key whose private
 * half was discarded: unpacked loading needs only the public key), so the ID is
 * the same on every machine and folder. The console writes it into the native
 * messaging host manifest's `allowed_origins` (`chrome-extension://ID/`).
 *
 * Chrome derives the ID as the first 32 hex characters of SHA-256 over the DER
 * public key, each hex digit 0-f mapped to a letter a-p
 * (developer.chrome.com/docs/extensions/reference/manifest/key).
 * test/unit/extension-manifest.test.ts recomputes it from the manifest.
 */
export const EXTENSION_ID = 'abjcbldekikalfjmmiemkjeemkfphege';

/** The origin Chrome gives the extension, as native messaging's `allowed_origins` spells it (trailing slash). */
export const EXTENSION_ORIGIN = `chrome-extension://${EXTENSION_ID}/`;
