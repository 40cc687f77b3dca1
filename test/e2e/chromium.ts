/**
 * Where the end-to-end tests find Chromium and with which flags it starts
 * (docs/browser-facts.md, "Running Chromium here": flags verified headless as root on this machine; WebMCPTesting
 * turns `document.modelContext` on).
 */
import { existsSync } from 'node:fs';

/** Path of the Chromium binary: $CHROMIUM_PATH, else /usr/bin/chromium. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Flags for every launch; add `--load-extension` and friends per test. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--enable-features=WebMCPTesting',
];

/** Whether the binary exists (the prerequisite check and .ci/run install it when missing). */
export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM_PATH);
}
