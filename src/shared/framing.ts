/**
 * Chrome native messaging framing, used on both hops of the link: Chrome ⇄
 * native host (stdio) and native host ⇄ console (local socket).
 *
 * A frame is a 32-bit length in native byte order (little-endian on every
 * platform Chrome ships on) followed by that many bytes of UTF-8 JSON
 * (developer.chrome.com/docs/extensions/develop/concepts/native-messaging,
 * "Native messaging protocol"). Chrome refuses host→browser messages over 1 MB;
 * browser→host may be up to 4 GB, but nothing we send needs more than
 * LIMITS.maxMessageBytes, so both directions use that cap here.
 *
 * Platform-neutral: Uint8Array in and out (a Node Buffer is a Uint8Array).
 */
import { LIMITS } from './limits';
import type { ErrorInfo } from './result';

/** Bytes in the length header. */
export const FRAME_HEADER_BYTES = 4;

/** An encoding or decoding failure: `frame-too-large`, `bad-json`, or `not-serialisable`. */
export class FrameError extends Error {
  constructor(
    readonly code: 'frame-too-large' | 'bad-json' | 'not-serialisable',
    message: string,
  ) {
    super(message);
    this.name = 'FrameError';
  }
}

const encoder = new TextEncoder();

/**
 * Encode one message as a frame.
 * @param message any JSON-serialisable value.
 * @param maxBytes cap on the JSON payload, in bytes (default LIMITS.maxMessageBytes = 1 MiB).
 * @throws FrameError `frame-too-large` when the UTF-8 JSON exceeds `maxBytes`;
 *   `not-serialisable` when JSON.stringify fails or yields nothing (undefined, a function).
 */
export function encodeFrame(message: unknown, maxBytes: number = LIMITS.maxMessageBytes): Uint8Array {
  let json: string | undefined;
  try {
    json = JSON.stringify(message);
  } catch (e) {
    throw new FrameError('not-serialisable', `message is not JSON-serialisable: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (typeof json !== 'string') throw new FrameError('not-serialisable', 'message has no JSON form');
  return encodePayload(encoder.encode(json), maxBytes);
}

/**
 * Prefix already-encoded UTF-8 JSON bytes with their length header.
 * @throws FrameError `frame-too-large` when `payload` exceeds `maxBytes`.
 */
export function encodePayload(payload: Uint8Array, maxBytes: number = LIMITS.maxMessageBytes): Uint8Array {
  if (payload.length > maxBytes) {
    throw new FrameError('frame-too-large', `message of ${payload.length} bytes exceeds the ${maxBytes}-byte limit`);
  }
  const frame = new Uint8Array(FRAME_HEADER_BYTES + payload.length);
  new DataView(frame.buffer).setUint32(0, payload.length, true);
  frame.set(payload, FRAME_HEADER_BYTES);
  return frame;
}

/** One decoded frame: the parsed message (`ok`), or why this frame was dropped. */
export type DecodedFrame = { ok: true; value: unknown; bytes: number } | { ok: false; error: ErrorInfo; fatal: boolean };

/** One raw frame (payload bytes, not parsed): what the native host relays. */
export type RawFrame = { ok: true; payload: Uint8Array } | { ok: false; error: ErrorInfo; fatal: true };

/**
 * An incremental frame decoder. Feed it chunks as they arrive (partial frames,
 * several frames coalesced in one chunk, or a header split across chunks all
 * work) and it yields complete frames.
 *
 * Bounded memory: it never holds more than one header plus one payload of at
 * most `maxBytes`. A header announcing more than `maxBytes` is fatal: the
 * decoder stops (every later `push` returns nothing) and the caller must close
 * the stream, because skipping an attacker-chosen number of bytes would let
 * the peer keep us reading forever. A frame whose payload is not UTF-8 JSON is
 * reported (`bad-json`, not fatal) and decoding goes on with the next frame:
 * the length header kept the boundary intact.
 */
export class FrameDecoder {
  private chunks: Uint8Array[] = [];
  private buffered = 0;
  private need = -1; // payload length of the frame in progress, -1 while reading a header
  private dead = false;
  private readonly utf8 = new TextDecoder('utf-8', { fatal: true });

  /** @param maxBytes largest payload accepted, in bytes (default LIMITS.maxMessageBytes). */
  constructor(private readonly maxBytes: number = LIMITS.maxMessageBytes) {}

  /** True after a fatal error (oversized header): the stream must be closed. */
  get failed(): boolean {
    return this.dead;
  }

  /** Bytes held while waiting for the rest of a frame. */
  get pendingBytes(): number {
    return this.buffered;
  }

  /** Feed a chunk; returns every frame it completed, parsed as JSON. */
  push(chunk: Uint8Array): DecodedFrame[] {
    const out: DecodedFrame[] = [];
    for (const raw of this.pushRaw(chunk)) {
      if (!raw.ok) {
        out.push(raw);
        continue;
      }
      try {
        out.push({ ok: true, value: JSON.parse(this.utf8.decode(raw.payload)), bytes: raw.payload.length });
      } catch (e) {
        out.push({
          ok: false,
          fatal: false,
          error: { code: 'bad-json', message: `frame is not UTF-8 JSON: ${e instanceof Error ? e.message : String(e)}` },
        });
      }
    }
    return out;
  }

  /** Feed a chunk; returns every frame it completed as raw payload bytes (no JSON parsing). */
  pushRaw(chunk: Uint8Array): RawFrame[] {
    if (this.dead || chunk.length === 0) return [];
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const out: RawFrame[] = [];
    for (;;) {
      if (this.need < 0) {
        if (this.buffered < FRAME_HEADER_BYTES) break;
        const header = this.take(FRAME_HEADER_BYTES);
        const length = new DataView(header.buffer, header.byteOffset, FRAME_HEADER_BYTES).getUint32(0, true);
        if (length > this.maxBytes) {
          this.dead = true;
          this.chunks = [];
          this.buffered = 0;
          out.push({
            ok: false,
            fatal: true,
            error: { code: 'frame-too-large', message: `frame header announces ${length} bytes; the limit is ${this.maxBytes}` },
          });
          break;
        }
        this.need = length;
      }
      if (this.buffered < this.need) break;
      out.push({ ok: true, payload: this.take(this.need) });
      this.need = -1;
    }
    return out;
  }

  // Remove and return the first n buffered bytes (copying only when a read spans chunks).
  private take(n: number): Uint8Array {
    const first = this.chunks[0];
    if (first && first.length >= n) {
      const part = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      this.buffered -= n;
      return part;
    }
    const outBuf = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const c = this.chunks[0] as Uint8Array;
      const k = Math.min(c.length, n - filled);
      outBuf.set(c.subarray(0, k), filled);
      filled += k;
      if (k === c.length) this.chunks.shift();
      else this.chunks[0] = c.subarray(k);
    }
    this.buffered -= n;
    return outBuf;
  }
}
