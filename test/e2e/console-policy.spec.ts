// The policy editor in the built renderer, in real Chromium over the loopback
// web host, wired to the REAL console core (ledger, settings, bridge, MCP
// endpoint) in a temporary data folder: a rule added in the editor is in
// settings.json, decides the very next agent call, and is receipted with the
// person as actor; a malformed rule is refused with a receipt; removing it is
// receipted too and the default comes back.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, test, type Browser } from '@playwright/test';
import type { ConsoleCore } from '../../src/main/core';
import type { WebHost } from '../../src/main/web/server';
import { startRealConsole, type RealConsole } from './support/real-console';

const SHOP = 'https://shop.example';

let world: RealConsole;
let browser: Browser;
let core: ConsoleCore;
let host: WebHost;
let dir: string;

test.beforeAll(async () => {
  world = await startRealConsole('echo-ui-policy-');
  ({ core, host, browser, dir } = world);
});

test.afterAll(async () => {
  await world?.close();
});

const onDisk = () => JSON.parse(readFileSync(path.join(dir, 'data', 'settings.json'), 'utf8')).policyRules as unknown[];
const discoverShop = () => core.broker.policy.decide({ faculty: 'webmcp-discover', operation: 'discover', kind: 'read', origin: SHOP, tabId: 3 });

test('add a rule in the editor, see it decide and receipted; a malformed one is refused; remove it', async () => {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
  });
  await page.goto(host.newConsoleUrl());
  await expect(page.getByTestId('approvals-empty')).toBeVisible();
  await page.getByTestId('nav-policy').click();
  await expect(page.getByTestId('policy-empty')).toBeVisible();
  expect(discoverShop().action).toBe('allow');

  // An allow for mutations is offered but the page says what it cannot do.
  await page.getByTestId('policy-action').selectOption('allow');
  await page.getByTestId('policy-kind').selectOption('mutation');
  await expect(page.getByTestId('policy-effect')).toContainText('always reviewed');

  // A malformed origin: refused by the core, said on the page, receipted, nothing stored.
  await page.getByTestId('policy-action').selectOption('deny');
  await page.getByTestId('policy-kind').selectOption('*');
  await page.getByTestId('policy-origin').fill('https://Shop.example/');
  await page.getByTestId('policy-add').click();
  await expect(page.getByTestId('policy-error')).toContainText('exact http(s) origin');
  await expect(page.getByTestId('policy-empty')).toBeVisible();
  expect(core.ledger.query({ event: 'refused' }).receipts[0]).toMatchObject({ faculty: 'console', actor: { kind: 'person' }, detail: { method: 'addPolicyRule', code: 'invalid-rule' } });
  expect(onDisk()).toEqual([]);

  await page.getByTestId('policy-origin').fill(SHOP);
  await page.getByTestId('policy-faculty').selectOption('webmcp-discover');
  await page.getByTestId('policy-reason').fill('not this shop');
  await page.getByTestId('policy-add').click();
  await expect(page.getByTestId('policy-rule-row')).toHaveCount(1);
  await expect(page.getByTestId('policy-rule-origin')).toHaveText(SHOP);
  await expect(page.getByTestId('policy-rule-faculty')).toHaveText('webmcp-discover');
  await expect(page.getByTestId('policy-rule-action')).toHaveText('deny');
  await expect(page.getByTestId('policy-error')).toHaveCount(0);
  const rule = { origin: SHOP, faculty: 'webmcp-discover', action: 'deny', reason: 'not this shop' };
  expect(onDisk()).toEqual([rule]);
  // The core's router already has it: no restart.
  expect(discoverShop()).toMatchObject({ action: 'deny', ruleIndex: 0, reason: 'not this shop' });
  expect(core.ledger.query({ event: 'policy-changed' }).receipts[0]).toMatchObject({ faculty: 'console', actor: { kind: 'person' }, origin: SHOP, detail: { change: 'added', rule } });

  await page.getByTestId('nav-receipts').click();
  await expect(page.getByTestId('receipt-row').first()).toContainText('policy-changed');
  await expect(page.getByTestId('receipt-row').first().getByTestId('receipt-actor')).toHaveText('person');

  await page.getByTestId('nav-policy').click();
  await expect(page.getByTestId('policy-rule-row')).toHaveCount(1);
  await page.getByTestId('policy-remove-0').click();
  await expect(page.getByTestId('policy-empty')).toBeVisible();
  expect(onDisk()).toEqual([]);
  expect(discoverShop()).toMatchObject({ action: 'allow', ruleIndex: null });
  const changes = core.ledger.query({ event: 'policy-changed' }).receipts;
  expect(changes).toHaveLength(2);
  expect(changes[0]).toMatchObject({ actor: { kind: 'person' }, detail: { change: 'removed', index: 0, rule } });

  await page.getByTestId('nav-receipts').click();
  await expect(page.getByTestId('receipt-row').first()).toContainText('policy-changed');
  await page.getByTestId('verify-ledger').click();
  await expect(page.getByTestId('verify-report')).toHaveText(/^Chain intact: \d+ receipts?/);
  expect(problems).toEqual([]);
  await page.close();
});
