/**
 * bench/budget: how soon a run waiting for budget goes on once the budget is
 * raised (API and worker as their own processes, the Temporal dev server,
 * Postgres), against a turn that never waited, in the same run.
 *
 *  - raise: a turn on a conversation whose budget (0 USD) cannot hold its model
 *    call waits (`awaiting_budget`); the clock starts when the PATCH raising the
 *    conversation's budget is sent and stops when the scripted model receives
 *    the call (its first byte);
 *  - baseline: a converse request on a conversation without a budget, from
 *    sending it to the model receiving the call (what any turn takes to reach
 *    the model).
 * Rounds alternate raise and baseline (ABBA). Target: raise ≤ 1 s (median of 20).
 *
 * Run: flock /tmp/test.lock npm run bench -- budget   (BENCH_BUDGET_ROUNDS, default 20)
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openaiSpec } from '../../test/fixtures/vendors/openai.js';
import { benchAgent, startPlatform } from '../lib/platform.js';

const ROUNDS = Number(process.env.BENCH_BUDGET_ROUNDS ?? 20);
const WARMUP = 2;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const ms = (x: number) => `${x.toFixed(1)} ms`;

// ---- The scripted model, in this process (same clock as the client) ----
let arrived: ((at: number) => void) | undefined;
const vendor = createServer((req: IncomingMessage, res: ServerResponse) => {
  // The call's first byte: what the waiting run was waiting to send.
  const at = performance.now();
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    arrived?.(at);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; stream?: boolean };
    const reply = { text: 'Budget allowed.', usage: { input: 20, output: 3 } };
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(openaiSpec.json(reply, body.model)));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.end(openaiSpec.sse(reply, body.model, body).join(''));
  });
});
await new Promise<void>((r) => vendor.listen(0, '127.0.0.1', r));
const vendorUrl = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;

/** Resolves with when the model next receives a call. */
function nextCall(): Promise<number> {
  return new Promise((resolve) => {
    arrived = (at) => {
      arrived = undefined;
      resolve(at);
    };
  });
}

// ---- Platform: Temporal dev server, Postgres, API and worker processes ----
const platform = await startPlatform('budget');
const { call } = platform;
const { q, agentId } = await benchAgent(platform, vendorUrl, {
  model: { pricing: { input_per_million_usd: 1, output_per_million_usd: 1 }, max_output_tokens: 1_000 },
});

const turn = (conversationId: string) =>
  call<{ status: string; run_id: string }>('POST', `/api/agent-server/converse${q}`, {
    agent_id: agentId,
    conversation_id: conversationId,
    message: 'hello',
  });

/** A turn that waits for a 0 USD budget, then the PATCH that raises it: to the model's first byte. */
async function raise(): Promise<{ firstByte: number; patch: number }> {
  const conversation = await call<{ id: string }>('POST', `/api/agent-server/conversations${q}`, {
    budget: { max_usd: 0, period: 'day' },
  });
  const waiting = await turn(conversation.id);
  if (waiting.status !== 'awaiting_budget')
    throw new Error(`expected awaiting_budget, got ${waiting.status}`);
  const reached = nextCall();
  const t0 = performance.now();
  await call('PATCH', `/api/agent-server/conversations/${conversation.id}${q}`, {
    budget: { max_usd: 100, period: 'day' },
  });
  const patch = performance.now() - t0;
  const firstByte = (await reached) - t0;
  await until(waiting.run_id, 'completed');
  return { firstByte, patch };
}

/** A turn that never waits: from sending converse to the model's first byte. */
async function baseline(): Promise<number> {
  const conversation = await call<{ id: string }>('POST', `/api/agent-server/conversations${q}`, {});
  const reached = nextCall();
  const t0 = performance.now();
  const done = await turn(conversation.id);
  if (done.status !== 'completed') throw new Error(`baseline turn ${done.status}`);
  return (await reached) - t0;
}

async function until(runId: string, status: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const run = await call<{ status: string }>('GET', `/api/agent-server/runs/${runId}`);
    if (run.status === status) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`run ${runId} never became ${status}`);
}

const raises: number[] = [];
const patches: number[] = [];
const baselines: number[] = [];
for (let i = 0; i < ROUNDS + WARMUP; i++) {
  // ABBA: the two cells swap places every other round.
  const order = i % 4 === 1 || i % 4 === 2 ? ['baseline', 'raise'] : ['raise', 'baseline'];
  for (const cell of order) {
    if (cell === 'raise') {
      const r = await raise();
      if (i >= WARMUP) {
        raises.push(r.firstByte);
        patches.push(r.patch);
      }
    } else {
      const b = await baseline();
      if (i >= WARMUP) baselines.push(b);
    }
  }
}

console.log(
  `budget raise → the model's first byte, median of ${ROUNDS}: ${ms(median(raises))} (target ≤ 1000 ms)`,
);
console.log(
  `  the PATCH's own answer: ${ms(median(patches))}; max raise → first byte ${ms(Math.max(...raises))}`,
);
console.log(`baseline converse → the model's first byte, median: ${ms(median(baselines))}`);
console.log(`raise − baseline: ${ms(median(raises) - median(baselines))}`);

await platform.stop();
vendor.close();
process.exit(0);
