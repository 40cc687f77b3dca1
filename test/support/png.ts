/**
 * A small PNG for tests of the target's picture (src/main/core/faculties/semantic-picture.ts checks
 * them; the dialog shows them). Written here from the PNG spec (signature, IHDR, IDAT of
 * zlib-deflated filter-0 rows, IEND, each chunk with its CRC-32): the product never encodes PNGs in
 * Node. Node 20.15+ has zlib.crc32.
 */
import { crc32, deflateSync } from 'node:zlib';

/** A `w`×`h` PNG (8-bit RGB) filled with `rgb` (default grey). */
export function tinyPng(w: number, h: number, rgb: [number, number, number] = [0x80, 0x80, 0x80]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([Buffer.from(type, 'latin1'), data])));
    return Buffer.concat([len, Buffer.from(type, 'latin1'), data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), ...Array.from({ length: w }, () => Buffer.from(rgb))]);
  const rows = Buffer.concat(Array.from({ length: h }, () => row));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}
