/**
 * bench/gateway: the same OpenAI chat requests, non-streaming and streaming,
 * sent straight to the scripted vendor and through the gateway, in one run.
 * Concurrency 1: a sequential fetch loop (sub-millisecond percentiles) → added
 * latency p50/p99 = gateway − direct. Concurrency 64: autocannon → requests/s.
 * Each with a plain key and with a key carrying a rate limit and a budget.
 * Every cell runs BENCH_ROUNDS times, interleaved, and reports the median (our
 * machines are shared and noisy); the load average is printed with each round.
 * Then a 60 s run at 64 connections watching the gateway's RSS.
 * Targets: added p50 ≤ 1 ms at concurrency 1; ≥ 2,000 non-streaming req/s; no memory growth.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import autocannon from 'autocannon';
import { ROOT, scratchDatabase, spawnServer } from '../lib/scratch.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const SEQ = Number(process.env.BENCH_SEQUENTIAL ?? 1500);
const SOAK = Number(process.env.BENCH_SOAK_SECONDS ?? 60);
/** Rounds of every cell, interleaved across targets; each figure is the median over rounds. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const median = (xs: number[]) => pct(xs, 50);
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function startVendor(): Promise<{ url: string; stop(): void }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'bench/gateway/vendor-server.ts'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve) =>
    proc.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())),
  );
  return { url, stop: () => proc.kill('SIGTERM') };
}

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  model: string;
}

const body = (model: string, stream: boolean) =>
  JSON.stringify({
    model,
    messages: [{ role: 'user', content: 'Say hello.' }],
    max_tokens: 16,
    ...(stream ? { stream: true } : {}),
  });

async function sequential(t: Target, stream: boolean): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  const payload = body(t.model, stream);
  for (let i = 0; i < SEQ + 100; i++) {
    const started = performance.now();
    const res = await fetch(t.url, { method: 'POST', headers: t.headers, body: payload });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${t.name}: HTTP ${res.status}`);
    if (i >= 100) times.push(performance.now() - started); // first 100 warm up
  }
  return { p50: pct(times, 50), p99: pct(times, 99) };
}

async function load(t: Target, stream: boolean, connections: number, duration = SECONDS) {
  const r = await autocannon({
    url: t.url,
    method: 'POST',
    headers: t.headers,
    body: body(t.model, stream),
    connections,
    duration,
  });
  return { rps: r.requests.average, errors: r.non2xx + r.errors + r.timeouts };
}

const scratch = await scratchDatabase('agent_bench_gw');
const vendor = await startVendor();
// Both API processes share the key, as replicas do.
const SECRETS_KEY = randomBytes(32).toString('base64');
const api = await spawnServer('api/server.ts', {
  DATABASE_URL: scratch.url,
  TEMPORAL_ADDRESS: '127.0.0.1:1',
  LOG_LEVEL: 'error',
  SECRETS_KEY,
});
// The same API with tracing off, same database and keys: the cost of tracing in the same run (issue 8).
const untraced = await spawnServer('api/server.ts', {
  DATABASE_URL: scratch.url,
  TEMPORAL_ADDRESS: '127.0.0.1:1',
  LOG_LEVEL: 'error',
  OTEL_SDK_DISABLED: 'true',
  SECRETS_KEY,
});
try {
  const post = async (path: string, payload: unknown) => {
    const res = await fetch(`${api.url}/api/agent-server${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(payload),
    });
    const json = (await res.json()) as { data: Record<string, string> };
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
    return json.data;
  };
  const vendorKey = 'sk-bench-vendor-key-0000000000';
  const provider = await post('/providers', {
    name: 'bench',
    provider_type: 'openai',
    base_url: `${vendor.url}/v1`,
    api_key: vendorKey,
  });
  const grants = [{ provider_id: provider.id, model_names: ['*'] }];
  const plain = await post('/virtual-keys', { name: 'plain', providers: grants });
  const limited = await post('/virtual-keys', {
    name: 'limited',
    providers: grants,
    rate_limit: { requests_per_minute: 10_000_000, tokens_per_minute: 1_000_000_000 },
    budget: { max_usd: 1_000_000, period: 'month' },
  });
  const json = { 'content-type': 'application/json' };
  const targets: Target[] = [
    {
      name: 'direct to vendor',
      url: `${vendor.url}/v1/chat/completions`,
      headers: { ...json, authorization: `Bearer ${vendorKey}` },
      model: 'gpt-4o-mini',
    },
    {
      name: 'gateway',
      url: `${api.url}/api/gateway/openai/v1/chat/completions`,
      headers: { ...json, authorization: `Bearer ${plain.secret_key}` },
      model: 'bench/gpt-4o-mini',
    },
    {
      name: 'gateway, tracing off',
      url: `${untraced.url}/api/gateway/openai/v1/chat/completions`,
      headers: { ...json, authorization: `Bearer ${plain.secret_key}` },
      model: 'bench/gpt-4o-mini',
    },
    {
      name: 'gateway + limit & budget',
      url: `${api.url}/api/gateway/openai/v1/chat/completions`,
      headers: { ...json, authorization: `Bearer ${limited.secret_key}` },
      model: 'bench/gpt-4o-mini',
    },
  ];

  const rows: Array<Record<string, string | number>> = [];
  const loads: string[] = [];
  for (const stream of [false, true]) {
    const seq = targets.map(() => ({ p50: [] as number[], p99: [] as number[] }));
    const conc = targets.map(() => ({ rps: [] as number[], errors: 0 }));
    for (let round = 0; round < ROUNDS; round++) {
      loads.push(loadavg()[0]!.toFixed(2));
      for (const [i, t] of targets.entries()) {
        const r = await sequential(t, stream);
        seq[i]!.p50.push(r.p50);
        seq[i]!.p99.push(r.p99);
      }
      for (const [i, t] of targets.entries()) {
        const r = await load(t, stream, 64);
        conc[i]!.rps.push(r.rps);
        conc[i]!.errors += r.errors;
      }
    }
    const p50 = seq.map((s) => median(s.p50));
    const p99 = seq.map((s) => median(s.p99));
    const rps = conc.map((c) => median(c.rps));
    targets.forEach((t, i) => {
      rows.push({
        mode: stream ? 'stream' : 'json',
        target: t.name,
        'c=1 p50 ms': p50[i]!.toFixed(3),
        'c=1 p99 ms': p99[i]!.toFixed(3),
        'added p50 ms': i === 0 ? '' : (p50[i]! - p50[0]!).toFixed(3),
        'added p99 ms': i === 0 ? '' : (p99[i]! - p99[0]!).toFixed(3),
        'c=64 req/s': Math.round(rps[i]!),
        'c=64 rounds': conc[i]!.rps.map((x) => Math.round(x)).join(' '),
        errors: conc[i]!.errors,
      });
    });
    // Issue 8: the same gateway with tracing off, same run, same rounds.
    const cost = 1 - rps[1]! / rps[2]!;
    console.log(
      `${stream ? 'stream' : 'json'}: tracing costs ${(100 * cost).toFixed(1)}% of c=64 throughput`,
    );
  }
  console.log(
    `\nbench/gateway — medians of ${ROUNDS} rounds; ${SEQ} sequential requests per c=1 cell, ${SECONDS}s per c=64 cell, ` +
      `node ${process.version}, ${new Date().toISOString()}, 1-min load average at each round: ${loads.join(' ')}`,
  );
  console.table(rows);

  if (SOAK > 0) {
    const rss: number[] = [await api.rssMb()];
    const soak = load(targets[3]!, false, 64, SOAK);
    const timer = setInterval(() => void api.rssMb().then((m) => rss.push(m)), 5_000);
    const soaked = await soak;
    clearInterval(timer);
    rss.push(await api.rssMb());
    const firstHalf = rss.slice(1, Math.ceil(rss.length / 2));
    const secondHalf = rss.slice(Math.ceil(rss.length / 2));
    const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    console.log(
      `soak: ${SOAK}s at 64 connections through the limited key: ${Math.round(soaked.rps)} req/s, ${soaked.errors} errors; ` +
        `gateway RSS MiB start ${rss[0]!.toFixed(0)}, samples ${rss.map((m) => m.toFixed(0)).join(' ')}; ` +
        `mean first half ${avg(firstHalf).toFixed(0)} vs second half ${avg(secondHalf).toFixed(0)}`,
    );
  }
} finally {
  await untraced.stop();
  await api.stop();
  vendor.stop();
  await scratch.drop();
}
