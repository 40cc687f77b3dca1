/**
 * The person's side of pairing in the extension's popup (issue 9 item 1: a new pairing is
 * confirmed in the popup as well as in the console; whoever answers on the console's socket
 * is never trusted to confirm alone). Driven through the REAL popup page, as a person clicks.
 */
import type { Page } from '@playwright/test';

/**
 * Click "The codes match" in the popup page once it asks, and wait until it no longer asks.
 * Compare the code first (`#pairing-code`): this helper does not.
 * @throws Error (Playwright's) when the button does not appear within 20 s.
 */
export async function confirmInPopup(popup: Page): Promise<void> {
  await popup.locator('#pair-yes').click({ timeout: 20_000 });
  await popup.locator('#confirm-pairing').waitFor({ state: 'hidden', timeout: 20_000 });
}

/** The code the popup shows while pairing (`#pairing-code`), once it shows one. */
export async function popupCode(popup: Page): Promise<string> {
  const code = popup.locator('#pairing-code');
  await code.waitFor({ state: 'visible', timeout: 20_000 });
  return ((await code.textContent()) ?? '').trim();
}
