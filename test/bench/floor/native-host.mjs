// The floor's native-messaging host: started by Chrome (through the wrapper that
// test/bench/floor/index.ts writes) as `node native-host.mjs <socket> <origin>`.
// It connects to the bench's Unix socket and relays whole frames both ways:
// Chrome's framing (4-byte little-endian length, then UTF-8 JSON) on stdio, the
// same framing on the socket. Frames are relayed as they are, never parsed.
import net from 'node:net';

/** Chrome's limit for a message to the host (1 MiB the other way; developer.chrome.com/docs/extensions/develop/concepts/native-messaging): a longer length is a broken stream. */
const MAX_FRAME_BYTES = 64 * 1024 * 1024;

/** A chunk handler that calls `onFrame(bytes)` with every complete frame (length prefix included). */
function framer(onFrame) {
  let buf = Buffer.alloc(0);
  return (chunk) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    while (buf.length >= 4) {
      const n = buf.readUInt32LE(0);
      if (n > MAX_FRAME_BYTES) process.exit(1);
      if (buf.length < 4 + n) break;
      onFrame(buf.subarray(0, 4 + n));
      buf = buf.subarray(4 + n);
    }
  };
}

const sock = net.connect(process.argv[2]);
process.stdin.on('data', framer((f) => sock.write(f)));
sock.on('data', framer((f) => process.stdout.write(f)));
process.stdin.on('end', () => sock.end());
sock.on('close', () => process.exit(0));
sock.on('error', () => process.exit(1));
