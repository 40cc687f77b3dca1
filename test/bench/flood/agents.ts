/**
 * The flood's senders for the flood bench (../flood.bench.ts), in their own
 * process: per agent token, one MCP session (initialize + initialized over raw
 * HTTP), then `tools/call list_tabs` sent open-loop at a fixed rate for a fixed
 * time (an attacker does not wait for answers), plus one 700 KB JSON-RPC batch
 * of 10,500 malformed calls from the first token at the start.
 *
 *   tsx agents.ts <mcpUrl> <ratePerToken /s> <seconds> <secret>...
 *
 * Prints one JSON line with what came back: per HTTP status, tool errors by
 * code, transport errors, and the batch's status.
 */
import { Agent, request } from 'node:http';

interface Tally {
  sent: number;
  statuses: Record<string, number>;
  toolErrors: Record<string, number>;
  ok: number;
  transportErrors: number;
}

const [url, rateArg, secondsArg, ...secrets] = process.argv.slice(2);
const target = new URL(url!);
const rate = Number(rateArg);
const seconds = Number(secondsArg);
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

function post(secret: string, body: string, session?: string): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: Number(target.port),
        path: target.pathname,
        method: 'POST',
        agent,
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          Authorization: `Bearer ${secret}`,
          ...(session ? { 'Mcp-Session-Id': session, 'Mcp-Protocol-Version': '2025-06-18' } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function openSession(secret: string): Promise<string> {
  const init = await post(secret, JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'flooder', version: '1' } } }));
  const sid = init.headers['mcp-session-id'];
  if (init.status !== 200 || typeof sid !== 'string') throw new Error(`initialize: HTTP ${init.status} ${init.text.slice(0, 200)}`);
  await post(secret, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), sid);
  return sid;
}

async function flood(secret: string, sid: string): Promise<Tally> {
  const t: Tally = { sent: 0, statuses: {}, toolErrors: {}, ok: 0, transportErrors: 0 };
  const inFlight: Array<Promise<void>> = [];
  const total = Math.round(rate * seconds);
  const start = performance.now();
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    t.sent++;
    const body = JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'list_tabs', arguments: {} } });
    inFlight.push(
      post(secret, body, sid).then(
        (r) => {
          t.statuses[r.status] = (t.statuses[r.status] ?? 0) + 1;
          const code = /Error \(([a-z-]+)\)/.exec(r.text)?.[1];
          if (r.status === 200 && code) t.toolErrors[code] = (t.toolErrors[code] ?? 0) + 1;
          else if (r.status === 200) t.ok++;
        },
        () => void t.transportErrors++,
      ),
    );
  }
  await Promise.all(inFlight);
  return t;
}

async function main(): Promise<void> {
  const sessions = await Promise.all(secrets.map(openSession));
  // The audit's 700 KB batch of malformed calls, from the first token, at the start.
  const batch = JSON.stringify(Array.from({ length: 10_500 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 7 } })));
  const batchP = post(secrets[0]!, batch).then((r) => ({ bytes: batch.length, status: r.status }));
  process.stdout.write('flooding\n');
  const tallies = await Promise.all(secrets.map((s, i) => flood(s, sessions[i]!)));
  process.stdout.write(`${JSON.stringify({ batch: await batchP, tallies })}\n`);
  agent.destroy();
}

main().catch((e: unknown) => {
  process.stderr.write(`flood agents: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
