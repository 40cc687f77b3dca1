/**
 * Chromium's own schemas validate (issue 8, item 3), end to end: a declarative
 * form with date, time, datetime-local, month, week and color inputs
 * (resources/demo/schedule), discovered and invoked through the console's
 * pipeline, the real link and the real extension. Chromium 156 writes a
 * regular expression into `format` for five of them; the console enforces it
 * as a pattern (an unknown format is otherwise an annotation), so the tool is
 * usable, a bad time never reaches the person, and a good call submits.
 */
import { test, expect, until } from './support/link-fixture';

const reader = { actor: { kind: 'agent' as const, name: 'schemas-e2e' }, kind: 'read' as const };

test("a form with time, date, month, week and color inputs is usable; Chromium's format patterns are enforced before the person sees anything", async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.url('schedule'));
  const d = await world.core.broker.discover({ tabId }, reader);
  if (!d.ok) throw new Error(d.error.message);
  const tool = d.value.tools.find((t) => t.name === 'schedule_visit');
  expect(tool, 'schedule_visit discovered').toBeTruthy();
  expect(tool!.kind).toBe('declarative');
  expect(tool!.unusable).toBeUndefined();
  const props = (tool!.inputSchema as { properties: Record<string, { format?: string }> }).properties;
  // What Chromium itself wrote (the fact this pins): RegExp-valued formats for these inputs.
  for (const name of ['at', 'callback', 'month', 'week', 'badge']) expect(props[name]?.format, `format of ${name}`).toMatch(/^\^.*\$$/);

  const invoke = (args: Record<string, unknown>) =>
    world.core.broker.invoke({ tabId, name: 'schedule_visit', descriptorHash: tool!.descriptorHash, arguments: args }, { ...reader, kind: 'mutation' });

  const bad = await invoke({ day: '2026-12-24', at: '25:99', room: 'lab', badge: 'red' });
  expect(bad).toMatchObject({ ok: false, error: { code: 'invalid-arguments' } });
  const issues = ((bad.ok ? null : bad.error.detail) as { issues: Array<{ instancePath: string }> }).issues.map((i) => i.instancePath).sort();
  expect(issues).toEqual(['/at', '/badge']);
  expect(world.core.broker.approvals.list()).toEqual([]);

  const good = invoke({ day: '2026-12-24', at: '10:30', room: 'lab', badge: '#ff0000', week: '2026-W52', month: '2026-12' });
  const view = await until(() => world.core.broker.approvals.list().find((v) => v.subject.toolName === 'schedule_visit'), 'the approval to be shown');
  expect(await world.core.api.decideApproval({ requestId: view.requestId, decision: 'approve' })).toEqual({ ok: true, value: null });
  expect(await good).toMatchObject({ ok: true, value: { outcome: 'succeeded' } });
  const visit = JSON.parse((await page.getByTestId('schedule-result').getAttribute('data-visit')) ?? '{}') as Record<string, string>;
  expect(visit).toMatchObject({ day: '2026-12-24', at: '10:30', room: 'lab', badge: '#ff0000', week: '2026-W52', month: '2026-12' });
});
