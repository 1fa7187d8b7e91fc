/**
 * What exporting spans to Postgres costs the API process (the Node side; the
 * database's own CPU is bench/traces/span-store.bench.ts): making each span's
 * COPY line when it ends, and sending each batch of 512 with `COPY … FROM
 * STDIN`. The exporter now encodes lines side by side into shared chunks and
 * writes a batch as the few views that cover it (`spanToCopyLine`,
 * `coalesceLines`); in the same run, interleaved, the ways it did it before:
 * a string per line joined into one string per batch (the stream encodes
 * it), and a buffer per line concatenated per batch. The figure is this
 * process's CPU (user + system, so the socket writes count) per span, the
 * median over BENCH_ROUNDS rounds of BENCH_BATCHES batches; the spans are a
 * gateway request's pair (request-spans.ts).
 */
import { once } from 'node:events';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import {
  coalesceLines,
  SPAN_COLUMNS,
  spanToCopyLine,
  spanToCopyText,
  type AnyReadableSpan,
} from '../../core/telemetry/span-row.js';
import { scratchDatabase } from '../lib/scratch.js';
import { requestSpans } from './request-spans.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const BATCHES = Number(process.env.BENCH_BATCHES ?? 40);
const BATCH = 512;
const SQL = `copy spans (${SPAN_COLUMNS.join(', ')}) from stdin`;

const scratch = await scratchDatabase('agent_bench_span_export');
const client = new pg.Client({ connectionString: scratch.url });
await client.connect();
try {
  const send = async (parts: Array<string | Buffer>) => {
    const stream = client.query(copyFrom(SQL));
    const done = once(stream, 'finish');
    for (const p of parts) stream.write(p);
    stream.end();
    await done;
  };
  const batches: AnyReadableSpan[][] = Array.from({ length: 20 }, () =>
    Array.from({ length: BATCH / 2 }, requestSpans).flat(),
  );
  const ways: Record<string, (batch: AnyReadableSpan[]) => Promise<void>> = {
    'string per line, joined per batch (before)': (b) => send([b.map(spanToCopyText).join('')]),
    'buffer per line, concatenated per batch': (b) =>
      send([Buffer.concat(b.map((s) => Buffer.from(spanToCopyText(s))))]),
    'lines in shared chunks, coalesced (now)': (b) => send(coalesceLines(b.map(spanToCopyLine))),
  };
  const perSpan = async (f: (batch: AnyReadableSpan[]) => Promise<void>) => {
    const c0 = process.cpuUsage();
    for (let i = 0; i < BATCHES; i++) await f(batches[i % batches.length]!);
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / (BATCHES * BATCH);
  };
  for (const f of Object.values(ways)) await perSpan(f); // warm-up
  const figures = Object.fromEntries(Object.keys(ways).map((k) => [k, [] as number[]]));
  for (let r = 0; r < ROUNDS; r++) {
    const order = Object.entries(ways);
    if (r % 2 === 1) order.reverse();
    for (const [name, f] of order) figures[name]!.push(await perSpan(f));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const bytes = Buffer.concat(batches[0]!.map(spanToCopyLine)).length / BATCH;
  console.log(
    `bench/traces span export — ${ROUNDS} rounds × ${BATCHES} batches of ${BATCH} spans each way, interleaved; ` +
      `this process's CPU per span (encode + COPY), medians; ${bytes} bytes per span; node ${process.version}, ${new Date().toISOString()}`,
  );
  for (const [name, xs] of Object.entries(figures))
    console.log(
      `  ${name.padEnd(44)} ${median(xs).toFixed(2)} µs  (rounds ${xs.map((x) => x.toFixed(2)).join(' ')})`,
    );
  const [before, , now] = Object.keys(ways) as [string, string, string];
  console.log(`  now / before: ${(median(figures[now]!) / median(figures[before]!)).toFixed(2)}`);
} finally {
  await client.end();
  await scratch.drop();
}
