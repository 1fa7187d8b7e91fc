/**
 * bench/evals: an eval of 20 recorded conversations (3 user turns each) × 2
 * variants through the API, the worker and the Temporal dev server, against
 * making the same model calls directly with the same parallelism (each
 * conversation × variant's calls in order, `concurrency` of them at once).
 * The scripted OpenAI-format model answers after BENCH_MODEL_MS (a fast
 * model; 0 shows the platform's own cost per turn).
 *
 * Target: the eval's wall time ≤ 1.5× the direct calls'.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { openaiSpec } from '../../test/fixtures/vendors/openai.js';
import { benchAgent, startPlatform } from '../lib/platform.js';

const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 20);
const TURNS = Number(process.env.BENCH_TURNS_PER_CONVERSATION ?? 3);
const VARIANTS = 2;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const MODEL_MS = Number(process.env.BENCH_MODEL_MS ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

// ---- The scripted model: answers the user's last message after MODEL_MS ----
let calls = 0;
const vendor = createServer((req: IncomingMessage, res: ServerResponse) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    calls++;
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      model: string;
      stream?: boolean;
      messages: Array<{ role: string; content: unknown }>;
    };
    const user = JSON.stringify(body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
    const reply = { text: `answer to ${user}`, usage: { input: 50, output: 9 } };
    setTimeout(() => {
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(openaiSpec.json(reply, body.model)));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(openaiSpec.sse(reply, body.model, body).join(''));
    }, MODEL_MS);
  });
});
await new Promise<void>((r) => vendor.listen(0, '127.0.0.1', r));
const vendorUrl = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;

// ---- Platform: Temporal dev server, Postgres, API and worker processes ----
const platform = await startPlatform('evals');
const { call } = platform;
const post = <T>(path: string, body: unknown) => call<T>('POST', path, body);
const { q, agentId } = await benchAgent(platform, vendorUrl);
const agent = { id: agentId };

// ---- The recording: CONVERSATIONS conversations of TURNS turns, in parallel ----
const conversations = Array.from({ length: CONVERSATIONS }, (_, i) => `bench-${i}-${randomUUID()}`);
await Promise.all(
  conversations.map(async (id) => {
    for (let t = 0; t < TURNS; t++) {
      const run = await post<{ status: string }>(`/api/agent-server/converse${q}`, {
        agent_id: agent.id,
        conversation_id: id,
        message: `question ${t} of ${id}`,
      });
      if (run.status !== 'completed') throw new Error(`recording: turn ${run.status}`);
    }
  }),
);

/** The same model calls as the eval, made directly: each conversation × variant in order, CONCURRENCY at once. */
async function direct(): Promise<number> {
  const jobs = conversations.flatMap((id) => Array.from({ length: VARIANTS }, () => id));
  let next = 0;
  const lane = async () => {
    while (next < jobs.length) {
      const id = jobs[next++]!;
      const messages: Array<{ role: string; content: string }> = [
        { role: 'system', content: 'You are a benchmark agent.' },
      ];
      for (let t = 0; t < TURNS; t++) {
        messages.push({ role: 'user', content: `question ${t} of ${id}` });
        const res = await fetch(`${vendorUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
          body: JSON.stringify({ model: 'gpt-bench', stream: true, messages }),
        });
        await res.arrayBuffer();
        messages.push({ role: 'assistant', content: 'answer' });
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  return performance.now() - t0;
}

let lastEval = '';
/** The eval, from its POST to its completion (read every 20 ms). */
async function evaluate(): Promise<number> {
  const t0 = performance.now();
  const ev = await post<{ id: string }>(`/api/agent-server/evals${q}`, {
    agent_id: agent.id,
    conversation_ids: conversations,
    variants: [{ name: 'current' }, { name: 'warmer', parameters: { temperature: 0.7 } }],
    concurrency: CONCURRENCY,
  });
  lastEval = ev.id;
  for (;;) {
    const got = await call<{ status: string; progress: { turns_done: number } }>(
      'GET',
      `/api/agent-server/evals/${ev.id}`,
    );
    if (got.status === 'completed') {
      if (got.progress.turns_done !== CONVERSATIONS * TURNS * VARIANTS) throw new Error('turns missing');
      return performance.now() - t0;
    }
    if (got.status !== 'queued' && got.status !== 'running')
      throw new Error(`eval ${got.status}: ${JSON.stringify(got)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

console.log(
  `machine: ${process.platform} ${process.arch}, node ${process.version}, cores ${cpus().length}, load ${loadavg()[0]!.toFixed(2)}`,
);
console.log(
  `eval: ${CONVERSATIONS} conversations × ${TURNS} turns × ${VARIANTS} variants, concurrency ${CONCURRENCY}, model ${MODEL_MS} ms`,
);
await direct(); // warm-up
await evaluate();
const evals: number[] = [];
const directs: number[] = [];
const ratios: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  // ABBA: every other round the direct calls go first.
  let e: number;
  let d: number;
  if (round % 2 === 0) {
    e = await evaluate();
    d = await direct();
  } else {
    d = await direct();
    e = await evaluate();
  }
  evals.push(e);
  directs.push(d);
  ratios.push(e / d);
  console.log(`round ${round + 1}: eval ${sec(e)}, direct ${sec(d)}, ratio ×${(e / d).toFixed(2)}`);
}
console.log(
  `eval wall time p50 ${sec(median(evals))}, direct p50 ${sec(median(directs))}, ratio p50 ×${median(ratios).toFixed(2)} (target ≤ ×1.5); model calls ${calls}`,
);

if (process.env.BENCH_DIAG) {
  const rows = await call<
    Array<{ run_id: string; latency_ms: number; case_index: number; variant: string; turn_index: number }>
  >('GET', `/api/agent-server/evals/${lastEval}/results`);
  const runs = await Promise.all(
    rows
      .slice(0, 12)
      .map((r) =>
        call<{ created_at: string; started_at: string; finished_at: string }>(
          'GET',
          `/api/agent-server/runs/${r.run_id}`,
        ),
      ),
  );
  console.log(`turn latency p50 ${median(rows.map((r) => r.latency_ms))} ms`);
  for (const [i, r] of runs.entries())
    console.log(
      rows[i]!.case_index,
      rows[i]!.variant,
      rows[i]!.turn_index,
      r.created_at,
      r.started_at,
      r.finished_at,
    );
}
await platform.stop();
vendor.close();
process.exit(0);
