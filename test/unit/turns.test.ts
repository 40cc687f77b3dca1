/**
 * Turns (src/main/core/turns.ts): agent work is released one piece per pass of
 * the event loop, in order, so the console's UI I/O is served between pieces.
 */
import { createServer, connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { Turns } from '../../src/main/core/turns';

describe('Turns', () => {
  it('releases waiters in order, each on its own pass of the event loop', async () => {
    const turns = new Turns();
    let pass = 0;
    let ticking = true;
    const tick = () => {
      pass += 1;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const seen: Array<[number, number]> = [];
    await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map((i) => turns.take().then(() => seen.push([i, pass]))));
    ticking = false;
    expect(seen.map(([i]) => i)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const passes = seen.map(([, p]) => p);
    expect(new Set(passes).size).toBe(passes.length); // never two in one pass
    expect(turns.waiting).toBe(0);
  });

  it('a socket message that arrives while 200 pieces of work wait is served before most of them run', async () => {
    const turns = new Turns();
    const server = createServer((s) => s.on('data', () => s.write('pong')));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const client: Socket = connect(port, '127.0.0.1');
    await new Promise<void>((r) => client.once('connect', r));
    try {
      let ran = 0;
      const work = Array.from({ length: 200 }, () => turns.take().then(() => {
        ran += 1;
        const until = Date.now() + 1; // about 1 ms of work per piece
        while (Date.now() < until) { /* busy */ }
      }));
      const servedAfter = await new Promise<number>((resolve) => {
        client.once('data', () => resolve(ran));
        client.write('ping');
      });
      await Promise.all(work);
      // Without turns all 200 would run in one pass before the socket is read again.
      expect(servedAfter).toBeLessThan(100);
      expect(ran).toBe(200);
    } finally {
      client.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
