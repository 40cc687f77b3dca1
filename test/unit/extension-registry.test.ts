import { describe, expect, it } from 'vitest';
import { ok } from '../../src/shared/result';
import { FacultyRegistry, type Faculty, type ReadFaculty } from '../../extension/src/background/faculties/registry';
import { defaultFaculties } from '../../extension/src/background/core';

const reader = (id: string, operations: string[] = ['info']): ReadFaculty => ({
  id, kind: 'read', operations, contentModule: 'page-info', checkRequest: () => null, read: async () => ok(null),
});

describe('FacultyRegistry', () => {
  const registry = new FacultyRegistry(defaultFaculties());

  it('registers the WebMCP faculties, page-info, semantic-read, semantic-target, semantic, live-patch and raw-js, each with its own content module', () => {
    expect(registry.ids()).toEqual(['webmcp-discover', 'webmcp-invoke', 'page-info', 'semantic-read', 'semantic-target', 'semantic', 'live-patch', 'raw-js']);
    const modules = defaultFaculties().map((f) => [f.id, f.kind, f.contentModule, [...f.operations]]);
    expect(modules).toEqual([
      ['webmcp-discover', 'read', 'webmcp', ['discover', 'locate', 'form', 'lint']],
      ['webmcp-invoke', 'dispatch', 'webmcp', ['invoke']],
      ['page-info', 'read', 'page-info', ['info']],
      ['semantic-read', 'read', 'semantic', ['snapshot', 'extract', 'wait', 'verify']],
      ['semantic-target', 'read', 'semantic', ['resolve', 'picture']],
      ['semantic', 'dispatch', 'semantic', ['click', 'hover', 'focus', 'scroll', 'type', 'key', 'fill']],
      // Live Patch runs in the semantic module: a patch's ref is the element the snapshot named.
      ['live-patch', 'dispatch', 'semantic', ['patch', 'revert']],
      // Raw JavaScript runs no module of ours in the page (chrome.scripting / chrome.userScripts); its URL read is the WebMCP module's.
      ['raw-js', 'dispatch', 'webmcp', ['run']],
    ]);
  });

  it('resolves by id and declared operation; unknown ids and operations are refused with their own codes', () => {
    expect(registry.resolve('page-info', 'info', 'read')).toMatchObject({ ok: true, value: { id: 'page-info' } });
    expect(registry.resolve('webmcp-invoke', 'invoke', 'dispatch')).toMatchObject({ ok: true, value: { id: 'webmcp-invoke' } });
    expect(registry.resolve('no-such', 'info', 'read')).toMatchObject({ ok: false, error: { code: 'unknown-faculty' } });
    expect(registry.resolve('__proto__', 'info', 'read')).toMatchObject({ ok: false, error: { code: 'unknown-faculty' } });
    expect(registry.resolve('page-info', 'click', 'read')).toMatchObject({ ok: false, error: { code: 'unknown-operation' } });
    expect(registry.resolve('webmcp-invoke', 'hover', 'dispatch')).toMatchObject({ ok: false, error: { code: 'unknown-operation' } });
  });

  it('a read of a dispatch faculty, or a dispatch of a read faculty, is unknown-operation (no grant-free way to act)', () => {
    expect(registry.resolve('webmcp-invoke', 'invoke', 'read')).toMatchObject({ ok: false, error: { code: 'unknown-operation' } });
    expect(registry.resolve('page-info', 'info', 'dispatch')).toMatchObject({ ok: false, error: { code: 'unknown-operation' } });
  });

  it('refuses a bad registry at construction: duplicate id, bad id, no operations, bad module name', () => {
    expect(() => new FacultyRegistry([reader('a'), reader('a')])).toThrow(/twice/);
    expect(() => new FacultyRegistry([reader('Bad Id')])).toThrow(/faculty id/);
    expect(() => new FacultyRegistry([reader('a', [])])).toThrow(/operations/);
    expect(() => new FacultyRegistry([{ ...reader('a'), contentModule: '../x' } as Faculty])).toThrow(/content module/);
  });
});
