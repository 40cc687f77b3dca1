/**
 * Redaction benchmark (`npm run bench -- redact`, issue 8 item 6). For a 1 MiB
 * and a 4 MiB tool result (JSON text shaped like an account export: ordinary
 * rows with share links, UUIDs, digests and order numbers, and secrets nested
 * under sensitive keys), each beside a reference measured in the same run:
 *
 * - `boundText` (cap at LIMITS.maxRedactInputBytes, structural redaction of the
 *   whole, cut to LIMITS.maxResultBytes: what the extension and the console do
 *   to every result) vs `JSON.parse` + `JSON.stringify` of the same text (the
 *   least any JSON-aware pass must do);
 * - the same for a hostile 4 MiB text (deep nesting, long label runs) that is not valid JSON.
 *
 * Rounds alternate subject and reference (BENCH_REDACT_ROUNDS, default 5) so
 * that load from elsewhere falls on both; medians in ms, `ratio` = subject /
 * reference, and os.loadavg() at start and end. No timing is asserted.
 */
import { loadavg } from 'node:os';
import { boundText } from '../../src/shared/bounds';

const ROUNDS = Number(process.env.BENCH_REDACT_ROUNDS ?? 5);
const MiB = 1024 * 1024;

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

/** An account export of about `bytes` UTF-8 bytes of JSON. */
function exportOf(bytes: number): string {
  const rand = rng(bytes);
  const pick = (a: string, n: number) => Array.from({ length: n }, () => a[Math.floor(rand() * a.length)]).join('');
  const AN = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const HEX = '0123456789abcdef';
  const rows: unknown[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const row = {
      orderNumber: `${112 + (i % 7)}-${pick('0123456789', 7)}-${pick('0123456789', 7)}`,
      id: `${pick(HEX, 8)}-${pick(HEX, 4)}-4${pick(HEX, 3)}-a${pick(HEX, 3)}-${pick(HEX, 12)}`,
      sha256: pick(HEX, 64),
      invoice: `https://docs.example/d/${pick(AN, 12)}?share=${pick(AN, 43)}`,
      note: i % 25 === 0 ? { session: { id: pick(AN, 32) }, headers: [{ name: 'Authorization', value: `Bearer ${pick(AN, 40)}` }] } : 'Delivered to the front door at 10:42.',
    };
    rows.push(row);
    size += JSON.stringify(row).length + 1;
  }
  return JSON.stringify({ account: { owner: 'Ann Example' }, rows });
}

function hostile(bytes: number): string {
  const unit = `${'['.repeat(200)}"a": ${'x-a: '.repeat(100)} password=${'a'.repeat(50)} `;
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

const r2 = (x: number) => Math.round(x * 100) / 100;

function measure(text: string, reference: (t: string) => unknown): Record<string, unknown> {
  const subject: number[] = [];
  const ref: number[] = [];
  let last = boundText(text);
  for (let i = 0; i < ROUNDS; i++) {
    let t = performance.now();
    last = boundText(text);
    subject.push(performance.now() - t);
    t = performance.now();
    reference(text);
    ref.push(performance.now() - t);
  }
  const s = median(subject);
  const r = median(ref);
  return { inputBytes: Buffer.byteLength(text), subjectMs: r2(s), referenceMs: r2(r), ratio: r2(s / r), redacted: last.redacted, truncated: last.truncated, outputBytes: Buffer.byteLength(last.text) };
}

export async function run(): Promise<Record<string, unknown>> {
  const loadAtStart = loadavg().map(r2);
  const parseStringify = (t: string) => JSON.stringify(JSON.parse(t));
  const out: Record<string, unknown> = {
    reference: 'JSON.parse + JSON.stringify of the same text (for the hostile text, which is not JSON: String.prototype.toLowerCase + split on white space)',
    rounds: ROUNDS,
    export1MiB: measure(exportOf(1 * MiB), parseStringify),
    export4MiB: measure(exportOf(4 * MiB), parseStringify),
    hostile4MiB: measure(hostile(4 * MiB), (t) => t.toLowerCase().split(/\s+/).length),
  };
  return { ...out, loadAtStart, loadAtEnd: loadavg().map(r2) };
}
