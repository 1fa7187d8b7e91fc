/**
 * bench/converse: agent turns through the converse API (API and worker as
 * their own processes, the Temporal dev server, Postgres) against a scripted
 * OpenAI-format model that answers at once, compared in the same run with
 * calling that model directly.
 *
 *  - one-step turn: converse (non-streaming) end to end − one direct streamed call;
 *  - three-step turn (two tool calls, then the answer): end to end − three direct calls;
 *  - first streamed token: when the client gets the first `message.delta`, minus
 *    when the model wrote its first byte (the model then pauses, so it is not the end);
 *  - turns per second with 20 concurrent sessions, each sending its next message
 *    when the previous turn is done.
 * Targets: one-step overhead ≤ 50 ms p50; first streamed token ≤ 30 ms after the model's first byte.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openaiSpec } from '../../test/fixtures/vendors/openai.js';
import type { Reply } from '../../test/fixtures/vendors/scripted-server.js';
import { benchAgent, startPlatform } from '../lib/platform.js';

const N = Number(process.env.BENCH_TURNS ?? 200);
const N3 = Number(process.env.BENCH_TURNS_3 ?? 100);
const NFIRST = Number(process.env.BENCH_FIRST_TOKEN ?? 100);
const LOAD_SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const SESSIONS = 20;
/** A pause before each one-step turn (a user reading the answer); 0 = back to back. */
const THINK_MS = Number(process.env.BENCH_THINK_MS ?? 0);
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const ms = (x: number) => `${x.toFixed(1)} ms`;

// ---- The scripted model, in this process (same clock as the client) ----
let firstByteAt = 0;
let pauseMs = 0;
const vendor = createServer((req: IncomingMessage, res: ServerResponse) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      model: string;
      stream?: boolean;
      messages: Array<{ role: string; content: unknown }>;
    };
    const lastUser = body.messages.map((m) => m.role).lastIndexOf('user');
    const userText = JSON.stringify(body.messages[lastUser]?.content ?? '');
    const toolResults = body.messages.slice(lastUser).filter((m) => m.role === 'tool').length;
    const reply: Reply =
      userText.includes('three-step') && toolResults < 2
        ? { tool_calls: [{ name: 'lookup', arguments: { n: toolResults } }], usage: { input: 50, output: 5 } }
        : { text: 'Hello there, this is the scripted answer.', usage: { input: 50, output: 9 } };
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(openaiSpec.json(reply, body.model)));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const events = openaiSpec.sse(reply, body.model, body);
    const pause = pauseMs;
    if (!pause) {
      res.end(events.join(''));
      return;
    }
    // First-token runs: the first text event now, the rest after a pause.
    const firstText = events.findIndex((e) => /"content":"[^"]/.test(e));
    res.write(events.slice(0, firstText + 1).join(''));
    firstByteAt = performance.now();
    setTimeout(() => res.end(events.slice(firstText + 1).join('')), pause);
  });
});
await new Promise<void>((r) => vendor.listen(0, '127.0.0.1', r));
const vendorUrl = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;

// ---- Platform: Temporal dev server, Postgres, API and worker processes ----
const platform = await startPlatform('converse', {
  OTEL_SDK_DISABLED: process.env.OTEL_SDK_DISABLED ?? 'false',
});
const post = <T>(path: string, body: unknown) => platform.call<T>('POST', path, body);
const { q, agentId } = await benchAgent(platform, vendorUrl, {
  agent: { summarizer_type: 'sliding_window', sliding_window_keep_count: 4 },
});
const agent = { id: agentId };

async function converse(conversationId: string, message: string): Promise<void> {
  const data = await post<{ status: string; error?: unknown }>(`/api/agent-server/converse${q}`, {
    agent_id: agent.id,
    conversation_id: conversationId,
    message,
  });
  if (data.status !== 'completed') throw new Error(`turn ${data.status}: ${JSON.stringify(data.error)}`);
}

async function direct(): Promise<void> {
  const res = await fetch(`${vendorUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
    body: JSON.stringify({
      model: 'gpt-bench',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hello' }],
    }),
  });
  await res.arrayBuffer();
}

async function timed(
  n: number,
  warm: number,
  fn: (i: number) => Promise<void>,
  pauseMs = 0,
): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n + warm; i++) {
    if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
    const t = performance.now();
    await fn(i);
    if (i >= warm) times.push(performance.now() - t);
  }
  return times;
}

console.log(
  `machine: ${process.platform} ${process.arch}, node ${process.version}, cores ${(await import('node:os')).cpus().length}`,
);
// Each session keeps a few turns of history, as a real one would.
const conv = () => `bench-${randomUUID()}`;

const directTimes = await timed(N, 20, () => direct());
if (process.env.BENCH_PAUSE_FOR_HISTORY) {
  const c = conv();
  for (let i = 0; i < 3; i++) await converse(c, `probe ${i}`);
  console.log(`PROBE ${platform.temporalAddress} session/${agent.id}/${c}`);
  await new Promise((r) => setTimeout(r, Number(process.env.BENCH_PAUSE_FOR_HISTORY)));
}
let c1 = conv();
const oneStepFrom = new Date();
const oneStep = await timed(
  N,
  20,
  (i) => {
    if (i % 10 === 0) c1 = conv();
    return converse(c1, `question ${i}`);
  },
  THINK_MS,
);
const oneStepTo = new Date();
// Every tenth turn opens a new conversation (its session workflow starts with it); times[k] is turn k + 20.
const firstTurns = oneStep.filter((_, k) => (k + 20) % 10 === 0);
const laterTurns = oneStep.filter((_, k) => (k + 20) % 10 !== 0);
let c3 = conv();
const threeStep = await timed(N3, 10, (i) => {
  if (i % 10 === 0) c3 = conv();
  return converse(c3, `three-step question ${i}`);
});

// First streamed token.
pauseMs = 150;
const firstToken: number[] = [];
for (let i = 0; i < NFIRST + 10; i++) {
  const res = await fetch(`${platform.url}/api/agent-server/converse${q}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: agent.id, conversation_id: conv(), message: 'stream it', stream: true }),
  });
  const decoder = new TextDecoder();
  let buf = '';
  let got = false;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buf += decoder.decode(chunk, { stream: true });
    if (!got && buf.includes('event: message.delta')) {
      got = true;
      if (i >= 10) firstToken.push(performance.now() - firstByteAt);
    }
  }
}
pauseMs = 0;

// Throughput: 20 sessions at once.
let turns = 0;
const deadline = performance.now() + LOAD_SECONDS * 1000;
const started = performance.now();
await Promise.all(
  Array.from({ length: SESSIONS }, async () => {
    let c = conv();
    for (let i = 0; performance.now() < deadline; i++) {
      if (i % 10 === 0) c = conv();
      await converse(c, `load ${i}`);
      turns++;
    }
  }),
);
const elapsed = (performance.now() - started) / 1000;

const d50 = pct(directTimes, 50);
const rows = [
  ['direct model call (streamed)', N, ms(d50), ms(pct(directTimes, 99)), '—'],
  ['one-step turn, end to end', N, ms(pct(oneStep, 50)), ms(pct(oneStep, 99)), '—'],
  [
    '… of which first turns (new conversation: the workflow starts)',
    firstTurns.length,
    ms(pct(firstTurns, 50)),
    ms(pct(firstTurns, 99)),
    '—',
  ],
  [
    '… of which later turns (running session)',
    laterTurns.length,
    ms(pct(laterTurns, 50)),
    ms(pct(laterTurns, 99)),
    '—',
  ],
  [
    'one-step overhead (− 1 direct call)',
    N,
    ms(pct(oneStep, 50) - d50),
    ms(pct(oneStep, 99) - d50),
    '≤ 50 ms p50',
  ],
  ['three-step turn, end to end', N3, ms(pct(threeStep, 50)), ms(pct(threeStep, 99)), '—'],
  [
    'three-step overhead (− 3 direct calls)',
    N3,
    ms(pct(threeStep, 50) - 3 * d50),
    ms(pct(threeStep, 99) - 3 * d50),
    '—',
  ],
  [
    "first streamed token after the model's first byte",
    NFIRST,
    ms(pct(firstToken, 50)),
    ms(pct(firstToken, 99)),
    '≤ 30 ms p50',
  ],
];
console.log('\n| measurement | n | p50 | p99 | target |\n|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.join(' | ')} |`);
console.log(
  `\nthroughput: ${turns} one-step turns in ${elapsed.toFixed(1)} s with ${SESSIONS} concurrent sessions = ${(turns / elapsed).toFixed(1)} turns/s`,
);
console.log(`direct-call baseline for the same model: ${(1000 / d50).toFixed(0)} sequential calls/s`);

// Where a one-step turn's time goes, from the run rows (medians over every completed turn).
const phases = await platform.db.raw<{ rows: Array<Record<string, number>> }>(`
  select percentile_cont(0.5) within group (order by extract(epoch from (started_at - created_at)) * 1000) as queued_to_started,
         percentile_cont(0.5) within group (order by extract(epoch from (finished_at - started_at)) * 1000) as started_to_finished
    from runs where status = 'completed'`);
const p = phases.rows[0]!;
console.log(
  `phases (median): stored → turn started ${ms(Number(p.queued_to_started))}, turn started → finished ${ms(Number(p.started_to_finished))}`,
);

// Where a one-step turn's time goes, from its trace (tracing on): each span's start
// after the request's server span started, and its duration (medians over the turns).
if (process.env.OTEL_SDK_DISABLED !== 'true') {
  await new Promise((r) => setTimeout(r, 3_000)); // the span exporter's batch delay
  const spans = await platform.db.raw<{ rows: Array<Record<string, string | number>> }>(
    `with roots as (
       select trace_id, start_time from spans
        where parent_span_id is null and name = 'POST /api/agent-server/converse'
          and start_time between ? and ?)
     select s.service_name, s.name, count(*)::int as n,
            percentile_cont(0.5) within group (order by extract(epoch from (s.start_time - r.start_time)) * 1000) as start_ms,
            percentile_cont(0.5) within group (order by s.duration_ms) as dur_ms
       from spans s join roots r using (trace_id)
      group by 1, 2 order by start_ms`,
    [oneStepFrom, oneStepTo],
  );
  console.log('\none-step turn, span by span (median start after the request began / median duration):');
  for (const r of spans.rows)
    console.log(
      `  ${ms(Number(r.start_ms)).padStart(9)} +${ms(Number(r.dur_ms)).padStart(9)}  ${r.service_name} ${r.name} (n=${r.n})`,
    );
}

await platform.stop();
vendor.close();
process.exit(0);
