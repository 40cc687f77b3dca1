/**
 * The pages the code cites are in the repository, and say what they are cited
 * for. Comments cite `docs/<page>.md`, often with a section
 * (`docs/design.md, "Trust rules"`, `docs/design.md, "Conventions" §2`) or an
 * anchor (`docs/browser-facts.md#native-messaging`); Markdown pages link each
 * other (`[row 8](trust-rules.md#trust-rules)`). This test fails when:
 *  - a file cites a design, facts or conventions page outside the repository
 *    (the upper-case page names, or the shared folder beside the checkout),
 *    which a clone does not have;
 *  - a cited `docs/<page>.md` (or a relative `.md` link in a page) does not exist;
 *  - a cited `#anchor` is not the anchor of a heading of that page, a quoted
 *    section is not found in one of its headings (case aside: "Refusal order"
 *    names "Invocation: the refusal order"), or a cited Conventions `§N` is not
 *    an item of that list.
 * Anchors follow GitHub's heading slugs (lower case, punctuation dropped,
 * spaces to hyphens).
 */
import { readdirSync, readFileSync, existsSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SELF = relative(ROOT, import.meta.filename);

/** Folders (and root files) whose text may cite a docs page. */
const SCAN = ['src', 'extension/src', 'bin', 'scripts', 'test', 'resources', 'docs'];
const ROOT_FILES = ['README.md', 'playwright.config.ts', 'vitest.config.ts', 'eslint.config.js', 'electron.vite.config.ts', 'vite.demo.config.ts', 'vite.extension.config.ts', 'vite.tools.config.ts'];
const TEXT = /\.(ts|tsx|js|mjs|cjs|json|py|md|html|css|sh)$/;
const SKIP_DIRS = new Set(['node_modules', 'out', 'dist', 'test-results', 'playwright-report', 'screenshots']);

function walk(dir: string, out: string[]): void {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    if (SKIP_DIRS.has(name)) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (TEXT.test(name)) out.push(p);
  }
}

function scannedFiles(): string[] {
  const files: string[] = [];
  for (const d of SCAN) walk(join(ROOT, d), files);
  for (const f of ROOT_FILES) if (existsSync(join(ROOT, f))) files.push(join(ROOT, f));
  return files.map((f) => relative(ROOT, f)).filter((f) => f !== SELF);
}

/** GitHub's anchor for a heading text. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

interface Page {
  headings: string[];
  slugs: Set<string>;
  /** Item numbers of the numbered list under "## Conventions", if any. */
  conventions: Set<number>;
}

const pages = new Map<string, Page | null>();

/** Headings of a Markdown page (outside code fences), or null when the file does not exist. */
function page(path: string): Page | null {
  if (pages.has(path)) return pages.get(path)!;
  const abs = join(ROOT, path);
  let result: Page | null = null;
  if (existsSync(abs)) {
    const headings: string[] = [];
    const conventions = new Set<number>();
    let fenced = false;
    let section = '';
    for (const line of readFileSync(abs, 'utf8').split('\n')) {
      if (/^\s*```/.test(line)) fenced = !fenced;
      if (fenced) continue;
      const h = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
      if (h) {
        headings.push(h[2]!);
        if (h[1] === '##') section = h[2]!;
        continue;
      }
      const item = /^(\d+)\.\s/.exec(line);
      if (item && section === 'Conventions') conventions.add(Number(item[1]));
    }
    result = { headings, slugs: new Set(headings.map(slug)), conventions };
  }
  pages.set(path, result);
  return result;
}

/** Joins comment continuation lines so a section name wrapped over two comment lines reads as one. */
function unwrap(text: string): string {
  return text.replace(/\s*\n\s*(?:\*(?!\/)|\/\/|#)?\s*/g, ' ');
}

interface Citation {
  file: string;
  line: number;
  page: string;
  anchor?: string;
  section?: string;
  paragraph?: number;
}

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split('\n').length;
}

/** Every `docs/<page>.md` citation of a file, with the anchor, quoted section and § that follow it. */
function citations(file: string, text: string): Citation[] {
  const found: Citation[] = [];
  const re = /(?<![\w/.-])docs\/([\w.-]+\.md)(#[\w-]+)?/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const c: Citation = { file, line: lineOf(text, m.index), page: `docs/${m[1]!}` };
    if (m[2]) c.anchor = m[2].slice(1);
    const after = unwrap(text.slice(m.index + m[0].length, m.index + m[0].length + 200));
    const q = /^,\s*(?:\\?"([^"\\]+)\\?"|'([^']+)')(?:\s*§(\d+))?/.exec(after);
    if (q) {
      c.section = q[1] ?? q[2];
      if (q[3]) c.paragraph = Number(q[3]);
    }
    found.push(c);
  }
  if (file.endsWith('.md')) {
    const link = /\]\(([^)\s#:]+\.md)(?:#([^)\s]+))?\)/g;
    for (let m = link.exec(text); m; m = link.exec(text)) {
      const target = relative(ROOT, resolve(join(ROOT, dirname(file)), m[1]!));
      const c: Citation = { file, line: lineOf(text, m.index), page: target };
      if (m[2]) c.anchor = m[2];
      found.push(c);
    }
  }
  return found;
}

/** What is wrong with one citation, or null. */
function problem(c: Citation): string | null {
  const p = page(c.page);
  if (!p) return `${c.page} does not exist`;
  if (c.anchor !== undefined && !p.slugs.has(c.anchor)) return `${c.page} has no heading with anchor #${c.anchor}`;
  const wanted = c.section?.toLowerCase();
  if (wanted !== undefined && !p.headings.some((h) => h.toLowerCase().includes(wanted))) return `${c.page} has no section "${c.section}"`;
  if (c.paragraph !== undefined && c.section === 'Conventions' && !p.conventions.has(c.paragraph)) {
    return `${c.page}, "Conventions" has no §${c.paragraph}`;
  }
  return null;
}

const FILES = scannedFiles();
const TEXTS = new Map(FILES.map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]));

describe('docs citations', () => {
  it('scans the source, test and docs trees (not vacuous)', () => {
    expect(FILES).toContain('src/shared/canonical.ts');
    expect(FILES).toContain('extension/src/content/webmcp.ts');
    expect(FILES).toContain('docs/design.md');
    const all = FILES.flatMap((f) => citations(f, TEXTS.get(f)!));
    expect(all.filter((c) => c.section !== undefined).length).toBeGreaterThan(20);
    expect(all.filter((c) => c.anchor !== undefined).length).toBeGreaterThan(10);
  });

  it('no file cites the design, facts or conventions page outside the repository', () => {
    const outside = /\b(?:FACTS|DESIGN|CONVENTIONS)\.md\b|\/work\/shared\b|\.\.\/shared\/[A-Z]+\.md/;
    const offenders = FILES.flatMap((f) =>
      TEXTS.get(f)!
        .split('\n')
        .map((line, i) => ({ line, at: `${f}:${i + 1}` }))
        .filter(({ line }) => outside.test(line))
        .map(({ at, line }) => `${at}: ${line.trim()}`),
    );
    expect(offenders).toEqual([]);
  });

  it('every cited docs page, anchor, section and § exists', () => {
    const broken = FILES.flatMap((f) => citations(f, TEXTS.get(f)!))
      .map((c) => ({ c, why: problem(c) }))
      .filter((x) => x.why !== null)
      .map(({ c, why }) => `${c.file}:${c.line}: ${why}`);
    expect(broken).toEqual([]);
  });

  it('the checker itself catches a missing page, anchor, section and §', () => {
    const fake = [
      'see docs/nowhere.md',
      'see docs/design.md#no-such-heading',
      '(docs/design.md, "No such section")',
      '(docs/design.md, "Conventions" §99)',
      '(docs/browser-facts.md, "WebMCP: running\n * tools")',
    ].join('\n');
    const found = citations('src/fake.ts', fake).map(problem);
    expect(found).toEqual([
      'docs/nowhere.md does not exist',
      'docs/design.md has no heading with anchor #no-such-heading',
      'docs/design.md has no section "No such section"',
      'docs/design.md, "Conventions" has no §99',
      null,
    ]);
    expect(slug('Security habits (design.md, "Conventions")')).toBe('security-habits-designmd-conventions');
    expect(slug('WebMCP: listing tools')).toBe('webmcp-listing-tools');
  });
});
