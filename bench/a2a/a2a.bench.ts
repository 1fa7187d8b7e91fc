/**
 * bench/a2a: one-step turns through the A2A door's `SendMessage`
 * (`/api/a2a/{agent_id}`) against the same turns through `POST /converse`,
 * in the same run, on the same platform (API and worker as their own
 * processes, the Temporal dev server, Postgres) and the same scripted
 * OpenAI-format model answering at once.
 *
 * A round runs one block per door (A2A by the official `@a2a-js/sdk` client,
 * A2A by a plain fetch of the JSON-RPC request, converse by a plain fetch),
 * in ABBA order over rounds; a block is TURNS turns in one fresh conversation
 * (the A2A contextId). Turn k of an A2A block is paired with turn k of
 * converse's in the same round; the figure is the median over ABBA blocks of
 * two rounds of the per-round median paired difference.
 * Target: A2A adds ≤ 2 ms p50 to a one-step turn.
 *
 * Run: flock /tmp/test.lock npm run bench -- a2a
 * BENCH_QUICK=1 for a smoke run; BENCH_A2A_ROUNDS (12), BENCH_A2A_TURNS (10).
 */
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { SendMessageRequest, TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { startAnsweringVendor } from '../lib/answering-vendor.js';
import { median, pct, signed } from '../lib/stats.js';
import { benchAgent, startPlatform } from '../lib/platform.js';

const QUICK = process.env.BENCH_QUICK === '1';
const env = (name: string, full: number, quick: number) =>
  Number(process.env[name] ?? (QUICK ? quick : full));
const ROUNDS = env('BENCH_A2A_ROUNDS', 12, 2);
const TURNS = env('BENCH_A2A_TURNS', 10, 3);
const WARM_ROUNDS = QUICK ? 1 : 2;
const ANSWER = 'Hello there, this is the scripted answer.';

const ms = (x: number) => `${x.toFixed(1)} ms`;

// ---- The scripted model, in this process: a text answer at once ----
const vendor = await startAnsweringVendor(ANSWER);
const vendorUrl = vendor.url;

const platform = await startPlatform('a2a', { OTEL_SDK_DISABLED: process.env.OTEL_SDK_DISABLED ?? 'false' });
const { q, agentId } = await benchAgent(platform, vendorUrl, { agent: { expose: { a2a: true } } });
const door = `${platform.url}/api/a2a/${agentId}`;
const client = await new ClientFactory().createFromUrl(`${door}/`);

type Door = 'sdk' | 'fetch' | 'converse';
const message = (text: string, contextId: string) => ({
  messageId: randomUUID(),
  role: 'ROLE_USER',
  parts: [{ text }],
  contextId,
});

function answered(task: Task | { status?: { state?: unknown } }): void {
  const state = task.status?.state;
  if (state !== TaskState.TASK_STATE_COMPLETED && state !== 'TASK_STATE_COMPLETED')
    throw new Error(`A2A turn not completed: ${JSON.stringify(task)}`);
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  if (res.status !== 200) throw new Error(`POST ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** One one-step turn through a door, until its end. */
async function turn(d: Door, contextId: string, text: string): Promise<void> {
  if (d === 'sdk') {
    const out = await client.sendMessage(SendMessageRequest.fromJSON({ message: message(text, contextId) }));
    return answered(out as Task);
  }
  if (d === 'fetch') {
    const out = (await post(
      door,
      { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: message(text, contextId) } },
      { 'a2a-version': '1.0' },
    )) as { result?: { task?: { status?: { state?: unknown } } } };
    return answered(out.result?.task ?? {});
  }
  const { data } = (await post(`${platform.url}/api/agent-server/converse${q}`, {
    agent_id: agentId,
    conversation_id: contextId,
    message: text,
  })) as { data: { status: string } };
  if (data.status !== 'completed') throw new Error(`converse turn ${data.status}`);
}

console.log(
  `machine: ${process.platform} ${process.arch}, node ${process.version}, cores ${cpus().length}, load ${loadavg()[0]!.toFixed(2)}`,
);
console.log(`${ROUNDS} rounds (+${WARM_ROUNDS} warm-up) × 3 doors × ${TURNS} turns in a fresh conversation`);

/** Each order followed by its reverse: every door in every place, each pair of rounds ABBA. */
const ORDERS: Door[][] = [
  ['sdk', 'fetch', 'converse'],
  ['converse', 'fetch', 'sdk'],
  ['fetch', 'converse', 'sdk'],
  ['sdk', 'converse', 'fetch'],
  ['converse', 'sdk', 'fetch'],
  ['fetch', 'sdk', 'converse'],
];
const lat: Record<Door, number[][]> = { sdk: [], fetch: [], converse: [] };
for (let round = 0; round < WARM_ROUNDS + ROUNDS; round++) {
  for (const d of ORDERS[round % ORDERS.length]!) {
    const contextId = `bench-${randomUUID()}`;
    const times: number[] = [];
    for (let k = 0; k < TURNS; k++) {
      const t = performance.now();
      await turn(d, contextId, `question ${k}`);
      times.push(performance.now() - t);
    }
    if (round >= WARM_ROUNDS) lat[d].push(times);
  }
}

const all = (d: Door) => lat[d].flat();
const blocks = (d: Door) => {
  const perRound = lat[d].map((times, r) => median(times.map((t, k) => t - lat.converse[r]![k]!)));
  const out: number[] = [];
  for (let r = 0; r + 1 < perRound.length; r += 2) out.push((perRound[r]! + perRound[r + 1]!) / 2);
  return out;
};
const label: Record<Door, string> = {
  sdk: '`SendMessage` (@a2a-js/sdk client)',
  fetch: '`SendMessage` (fetch)',
  converse: '`POST /converse` (fetch)',
};
console.log('\n| door | turns | p50 | p95 |\n|---|---|---|---|');
for (const d of ['sdk', 'fetch', 'converse'] as const)
  console.log(`| ${label[d]} | ${all(d).length} | ${ms(pct(all(d), 50))} | ${ms(pct(all(d), 95))} |`);
console.log('\nadded by the A2A door (target ≤ 2 ms p50):');
for (const d of ['sdk', 'fetch'] as const) {
  const b = blocks(d);
  console.log(
    `  ${label[d]}: p50 − p50 ${signed(pct(all(d), 50) - pct(all('converse'), 50))}; ABBA blocks ${b.map(signed).join(' ')} (median ${signed(median(b))})`,
  );
}

await platform.stop();
vendor.close();
process.exit(0);
