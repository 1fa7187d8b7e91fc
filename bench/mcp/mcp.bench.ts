/**
 * bench/mcp: one-step turns as MCP tool calls through the MCP door
 * (`/api/mcp/{project_id}`) against the same turns through `POST /converse`,
 * in the same run, on the same platform (API and worker as their own
 * processes, the Temporal dev server, Postgres) and the same scripted
 * OpenAI-format model answering at once.
 *
 * A round runs one block per door (the v2 client `@modelcontextprotocol/client`
 * speaking 2026-07-28, the v1 SDK `@modelcontextprotocol/sdk` over a
 * 2025-11-25 session, converse by a plain fetch), the three doors taking each
 * place equally over rounds; a block is TURNS turns in one fresh
 * conversation (the tool's `conversation_id`). Turn k of an MCP block is
 * paired with turn k of converse's in the same round; the figure is the
 * median over ABBA blocks of two rounds of the per-round median paired
 * difference. Target: the MCP door adds ≤ 2 ms p50 to a one-step turn.
 *
 * Run: flock /tmp/test.lock npm run bench -- mcp
 * BENCH_QUICK=1 for a smoke run; BENCH_MCP_ROUNDS (12), BENCH_MCP_TURNS (10).
 */
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startAnsweringVendor } from '../lib/answering-vendor.js';
import { median, pct, signed } from '../lib/stats.js';
import { benchAgent, startPlatform } from '../lib/platform.js';

const QUICK = process.env.BENCH_QUICK === '1';
const env = (name: string, full: number, quick: number) =>
  Number(process.env[name] ?? (QUICK ? quick : full));
const ROUNDS = env('BENCH_MCP_ROUNDS', 12, 2);
const TURNS = env('BENCH_MCP_TURNS', 10, 3);
const WARM_ROUNDS = QUICK ? 1 : 2;
const ANSWER = 'Hello there, this is the scripted answer.';

const ms = (x: number) => `${x.toFixed(1)} ms`;

// ---- The scripted model, in this process: a text answer at once ----
const vendor = await startAnsweringVendor(ANSWER);
const vendorUrl = vendor.url;

const platform = await startPlatform('mcp', { OTEL_SDK_DISABLED: process.env.OTEL_SDK_DISABLED ?? 'false' });
const { q, agentId, projectId } = await benchAgent(platform, vendorUrl, {
  agent: { expose: { mcp: true, a2a: false } },
});
const door = new URL(`${platform.url}/api/mcp/${projectId}`);
const INFO = { name: 'bench', version: '1.0.0' };
const v2 = new ClientV2(INFO, { versionNegotiation: { mode: 'auto' } });
await v2.connect(new TransportV2(door));
const v1 = new ClientV1(INFO);
const v1Transport = new TransportV1(door);
await v1.connect(v1Transport);
if (v2.getNegotiatedProtocolVersion() !== '2026-07-28' || v1Transport.protocolVersion !== '2025-11-25')
  throw new Error('the clients did not negotiate the revisions this bench compares');

type Door = 'v2' | 'v1' | 'converse';

function answered(result: { content?: unknown; isError?: unknown }): void {
  const text = (result.content as Array<{ text?: string }> | undefined)?.[0]?.text;
  if (result.isError || text !== ANSWER)
    throw new Error(`MCP turn did not answer: ${JSON.stringify(result)}`);
}

/** One one-step turn through a door, until its end. */
async function turn(d: Door, conversationId: string, text: string): Promise<void> {
  const args = { name: 'bench-agent', arguments: { message: text, conversation_id: conversationId } };
  if (d === 'v2') return answered(await v2.callTool(args));
  if (d === 'v1') return answered((await v1.callTool(args)) as { content?: unknown; isError?: unknown });
  const res = await fetch(`${platform.url}/api/agent-server/converse${q}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: agentId, conversation_id: conversationId, message: text }),
  });
  const { data } = (await res.json()) as { data: { status: string } };
  if (data.status !== 'completed') throw new Error(`converse turn ${data.status}`);
}

console.log(
  `machine: ${process.platform} ${process.arch}, node ${process.version}, cores ${cpus().length}, load ${loadavg()[0]!.toFixed(2)}`,
);
console.log(`${ROUNDS} rounds (+${WARM_ROUNDS} warm-up) × 3 doors × ${TURNS} turns in a fresh conversation`);

/** Each order followed by its reverse: every door in every place, each pair of rounds ABBA. */
const ORDERS: Door[][] = [
  ['v2', 'v1', 'converse'],
  ['converse', 'v1', 'v2'],
  ['v1', 'converse', 'v2'],
  ['v2', 'converse', 'v1'],
  ['converse', 'v2', 'v1'],
  ['v1', 'v2', 'converse'],
];
const lat: Record<Door, number[][]> = { v2: [], v1: [], converse: [] };
for (let round = 0; round < WARM_ROUNDS + ROUNDS; round++) {
  for (const d of ORDERS[round % ORDERS.length]!) {
    const conversationId = `bench-${randomUUID()}`;
    const times: number[] = [];
    for (let k = 0; k < TURNS; k++) {
      const t = performance.now();
      await turn(d, conversationId, `question ${k}`);
      times.push(performance.now() - t);
    }
    if (round >= WARM_ROUNDS) lat[d].push(times);
  }
}

const all = (d: Door) => lat[d].flat();
const paired = (d: Door) => lat[d].flatMap((times, r) => times.map((t, k) => t - lat.converse[r]![k]!));
const blocks = (d: Door) => {
  const perRound = lat[d].map((times, r) => median(times.map((t, k) => t - lat.converse[r]![k]!)));
  const out: number[] = [];
  for (let r = 0; r + 1 < perRound.length; r += 2) out.push((perRound[r]! + perRound[r + 1]!) / 2);
  return out;
};
const label: Record<Door, string> = {
  v2: '`tools/call`, 2026-07-28 (@modelcontextprotocol/client)',
  v1: '`tools/call`, 2025-11-25 session (@modelcontextprotocol/sdk)',
  converse: '`POST /converse` (fetch)',
};
console.log('\n| door | turns | p50 | p95 |\n|---|---|---|---|');
for (const d of ['v2', 'v1', 'converse'] as const)
  console.log(`| ${label[d]} | ${all(d).length} | ${ms(pct(all(d), 50))} | ${ms(pct(all(d), 95))} |`);
console.log('\nadded by the MCP door (target ≤ 2 ms p50):');
for (const d of ['v2', 'v1'] as const) {
  const b = blocks(d);
  console.log(
    `  ${label[d]}: p50 − p50 ${signed(pct(all(d), 50) - pct(all('converse'), 50))}; median of paired turns ${signed(median(paired(d)))}; ABBA blocks ${b.map(signed).join(' ')} (median ${signed(median(b))})`,
  );
}

await v1Transport.terminateSession().catch(() => undefined);
await v1.close();
await v2.close();
await platform.stop();
vendor.close();
process.exit(0);
