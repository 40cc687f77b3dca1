import { describe, expect, it } from 'vitest';
import { encodeFrame, encodePayload, FrameDecoder, FrameError } from '../../src/shared/framing';
import { LIMITS } from '../../src/shared/limits';

const concat = (...parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
};
const header = (n: number): Uint8Array => {
  const h = new Uint8Array(4);
  new DataView(h.buffer).setUint32(0, n, true);
  return h;
};

describe('link framing (Chrome native messaging: 4-byte LE length + UTF-8 JSON)', () => {
  it('encodes a little-endian length and UTF-8 JSON', () => {
    const f = encodeFrame({ a: 'é' });
    expect([...f.subarray(0, 4)]).toEqual([10, 0, 0, 0]);
    expect(new TextDecoder().decode(f.subarray(4))).toBe('{"a":"é"}');
  });

  it('decodes one byte at a time and coalesced frames alike', () => {
    const msgs = [{ type: 'ping', seq: 1 }, { x: 'ü'.repeat(300) }, [1, 2, 3], 'str', null];
    const all = concat(...msgs.map((m) => encodeFrame(m)));
    const d1 = new FrameDecoder();
    const got1 = [...all].flatMap((b) => d1.push(new Uint8Array([b])));
    const got2 = new FrameDecoder().push(all);
    for (const got of [got1, got2]) {
      expect(got.map((g) => (g.ok ? g.value : g.error.code))).toEqual(msgs);
    }
    expect(d1.pendingBytes).toBe(0);
  });

  it('keeps a split header and reports partial frames only when complete', () => {
    const f = encodeFrame({ hello: 'world' });
    const d = new FrameDecoder();
    expect(d.push(f.subarray(0, 2))).toEqual([]);
    expect(d.push(f.subarray(2, 9))).toEqual([]);
    expect(d.push(f.subarray(9))).toEqual([{ ok: true, value: { hello: 'world' }, bytes: f.length - 4 }]);
  });

  it('reports bad JSON and invalid UTF-8 per frame without losing the next frame', () => {
    const bad = encodePayload(new TextEncoder().encode('{nope'));
    const badUtf8 = encodePayload(new Uint8Array([0x22, 0xff, 0x22]));
    const empty = encodePayload(new Uint8Array(0));
    const good = encodeFrame({ ok: 1 });
    const got = new FrameDecoder().push(concat(bad, badUtf8, empty, good));
    expect(got.map((g) => (g.ok ? 'ok' : `${g.error.code}:${g.fatal}`))).toEqual(['bad-json:false', 'bad-json:false', 'bad-json:false', 'ok']);
  });

  it('refuses an oversized length header at once, without buffering its bytes, and stays dead', () => {
    const d = new FrameDecoder(1024);
    const got = d.push(concat(header(0xffffffff), new Uint8Array(10)));
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ ok: false, fatal: true, error: { code: 'frame-too-large' } });
    expect(d.failed).toBe(true);
    expect(d.pendingBytes).toBe(0);
    expect(d.push(encodeFrame({ a: 1 }))).toEqual([]);
  });

  it('accepts exactly the cap and refuses one byte more (1 MiB: Chrome host→browser limit)', () => {
    const exact = new Uint8Array(LIMITS.maxMessageBytes).fill(0x20);
    exact[0] = 0x31; // "1" followed by spaces is valid JSON
    const ok = new FrameDecoder().push(encodePayload(exact));
    expect(ok[0]).toMatchObject({ ok: true, value: 1 });
    expect(() => encodePayload(new Uint8Array(LIMITS.maxMessageBytes + 1))).toThrow(FrameError);
    expect(() => encodeFrame({ s: 'x'.repeat(LIMITS.maxMessageBytes) })).toThrow(/exceeds the 1048576-byte limit/);
    const d = new FrameDecoder();
    expect(d.push(header(LIMITS.maxMessageBytes + 1))[0]).toMatchObject({ ok: false, fatal: true });
  });

  it('refuses values JSON cannot carry', () => {
    expect(() => encodeFrame(undefined)).toThrow(/no JSON form/);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => encodeFrame(cyclic)).toThrow(FrameError);
  });

  it('pushRaw hands back payload bytes unparsed (what the native host relays)', () => {
    const d = new FrameDecoder();
    const got = d.pushRaw(concat(encodePayload(new TextEncoder().encode('{x')), encodeFrame(1)));
    expect(got.map((g) => (g.ok ? new TextDecoder().decode(g.payload) : 'err'))).toEqual(['{x', '1']);
  });
});
