/**
 * bench/gateway: the same OpenAI chat requests, non-streaming and streaming,
 * sent straight to the scripted vendor and through the gateway, in one run.
 * Concurrency 1: a sequential fetch loop (sub-millisecond percentiles) → added
 * latency p50/p99 = gateway − direct. Concurrency 64: autocannon → requests/s,
 * with the server's and Postgres's CPU per request. Each with a plain key and
 * with a key carrying a rate limit and a budget, and through a second
 * API process with observability off (OTEL_SDK_DISABLED, METRICS_ENABLED=false):
 * the traced/untraced throughput ratio. Observability's cost (target: the
 * default settings cost ≤ 5% more CPU per request than `otel_sdk_disabled`):
 * cells `default` (the traced process), `always_on`, `otel_sdk_disabled` and
 * `off`, each its own process, CPU per request (API + Postgres) as the median
 * over ABBA blocks (bench/lib/cost-cells.ts). Two
 * processes running the same code can differ here as much as tracing does,
 * so for that figure run more of each (BENCH_VARIANT_ENV, e.g.
 * '[{"OTEL_SDK_DISABLED":"true"},{}]') with BENCH_LIMITED=false and many
 * short rounds: the pooled line and its A/A ratios are the figure to quote.
 * Every cell runs BENCH_ROUNDS times, interleaved (every other round in
 * reverse order), and reports the median (our machines are noisy);
 * the load average is printed with each round.
 * Then a soak at 64 connections watching each API process's memory
 * from inside (soak.ts).
 * Targets: added p50 ≤ 1 ms at concurrency 1; ≥ 2,000 non-streaming req/s;
 * tracing ≤ 10% of throughput; no memory growth over a 60-second run.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { COST_CELL_ENVS, reportCostCells } from '../lib/cost-cells.js';
import {
  apiNodeArgs,
  GATEWAY_MODEL,
  GATEWAY_PATH,
  load as loadTarget,
  pct,
  sequential as sequentialTarget,
  setupGatewayKeys,
  startVendor,
  VENDOR_KEY,
  type Target,
} from '../lib/gateway-targets.js';
import { scratchDatabase, spawnServer, type Child } from '../lib/scratch.js';
import { soak } from './soak.js';
import { reportPooled, reportTracingCost } from './tracing-cost.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const SEQ = Number(process.env.BENCH_SEQUENTIAL ?? 1500);
const SOAK = Number(process.env.BENCH_SOAK_SECONDS ?? 60);
/** Load at 64 connections before the soak's first figures: pools, JIT and caches settle. */
const SOAK_WARMUP = Number(process.env.BENCH_SOAK_WARMUP_SECONDS ?? 15);
/** A folder: heap snapshots of the traced API at the start and end of the soak (diff with bench/lib/heap-diff.ts). */
const SNAPSHOTS = process.env.BENCH_HEAP_SNAPSHOTS;
/** A folder: CPU profiles of the traced and untraced gateway during each c=64 cell. */
const PROFILES = process.env.BENCH_CPU_PROFILES;
/** Only the soak (after a short warm-up): skips the latency and throughput cells. */
const SOAK_ONLY = process.env.BENCH_SOAK_ONLY === 'true';
/** Load on every target before the measured rounds. */
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
/** Idle time before each c=64 cell: span export, Postgres and the vendor's GC catch up with the previous cell. */
const PAUSE_MS = Number(process.env.BENCH_PAUSE_MS ?? 2000);
/** `json`, `stream` or both (comma-separated). BENCH_SEQUENTIAL=0 skips the c=1 cells. */
const MODES = (process.env.BENCH_MODES ?? 'json,stream').split(',');
/** Rounds of every cell, interleaved across targets; each figure is the median over rounds. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/**
 * Environment settings for more traced API processes measured beside the
 * other two: a JSON object, or an array of them, one process each (e.g.
 * '{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE":"64"}'). An A/B of a setting in the same
 * run, each reported against the untraced process like the traced one.
 */
const VARIANT_ENVS: Array<Record<string, string>> = process.env.BENCH_VARIANT_ENV
  ? [
      JSON.parse(process.env.BENCH_VARIANT_ENV) as Record<string, string> | Array<Record<string, string>>,
    ].flat()
  : [];
/**
 * `false`: no extra processes for the observability cost cells: `always_on`
 * (every trace stored) and `otel_sdk_disabled` (tracing off, counting and
 * metrics on), measured beside `default` (the traced process) and `off` (the
 * untraced one, everything observability off).
 */
const COST_CELLS = process.env.BENCH_COST_CELLS !== 'false';
/** `false`: no cells of unsampled requests to the traced processes (tracing off in the same process). */
const SAME_PROCESS = process.env.BENCH_SAME_PROCESS !== 'false';
/** `false`: no "limit & budget" cells (they take a quarter of the run; the soak still uses that key). */
const LIMITED = process.env.BENCH_LIMITED !== 'false';
const median = (xs: number[]) => pct(xs, 50);
const sequential = (t: Target, stream: boolean) => sequentialTarget(t, stream, SEQ);

/** Set once the vendor runs: its CPU is part of every target's per-request total. */
let vendorPid = 0;

const load = (t: Target, stream: boolean, connections: number, duration = SECONDS) =>
  loadTarget(t, stream, { connections, seconds: duration, vendorPid });

/** Node flags of every API process: by default those of package.json's `api` script (its V8 heap cap). */
const API_NODE_ARGS = apiNodeArgs();
/** Idle time before the live heap is measured (post-GC) at the start and end of the soak. */
const REST_MS = Number(process.env.BENCH_SOAK_REST_MS ?? 3000);
const MiB = (b: number) => b / 2 ** 20;
const fmt = (b: number) => MiB(b).toFixed(0);

const scratch = await scratchDatabase('agent_bench_gw');
const vendor = await startVendor();
vendorPid = vendor.pid;
// Both API processes share the key, as replicas do.
const SECRETS_KEY = randomBytes(32).toString('base64');
const api = await spawnServer(
  'api/server.ts',
  { DATABASE_URL: scratch.url, TEMPORAL_ADDRESS: '127.0.0.1:1', LOG_LEVEL: 'error', SECRETS_KEY },
  { probe: true, nodeArgs: API_NODE_ARGS },
);
// The same API with observability off (no spans stored or counted, no
// metrics), same database and keys: the cost of observability in the same run.
const untraced = await spawnServer(
  'api/server.ts',
  {
    DATABASE_URL: scratch.url,
    TEMPORAL_ADDRESS: '127.0.0.1:1',
    LOG_LEVEL: 'error',
    SECRETS_KEY,
    ...COST_CELL_ENVS.off,
  },
  { probe: true, nodeArgs: API_NODE_ARGS },
);
const variants: Child[] = [];
for (const env of VARIANT_ENVS)
  variants.push(
    await spawnServer(
      'api/server.ts',
      { DATABASE_URL: scratch.url, TEMPORAL_ADDRESS: '127.0.0.1:1', LOG_LEVEL: 'error', SECRETS_KEY, ...env },
      { probe: true, nodeArgs: API_NODE_ARGS },
    ),
  );
/** The cost cells beside `default` (api) and `off` (untraced). */
const costCells: Array<{ name: string; child: Child }> = [];
if (COST_CELLS)
  for (const name of ['always_on', 'otel_sdk_disabled'] as const)
    costCells.push({
      name,
      child: await spawnServer(
        'api/server.ts',
        {
          DATABASE_URL: scratch.url,
          TEMPORAL_ADDRESS: '127.0.0.1:1',
          LOG_LEVEL: 'error',
          SECRETS_KEY,
          ...COST_CELL_ENVS[name],
        },
        { probe: true, nodeArgs: API_NODE_ARGS },
      ),
    });
try {
  const { plain, limited } = await setupGatewayKeys(api.url, vendor.url);
  const json = { 'content-type': 'application/json' };
  const targets: Target[] = [
    {
      name: 'direct to vendor',
      pid: vendor.pid,
      url: `${vendor.url}/v1/chat/completions`,
      headers: { ...json, authorization: `Bearer ${VENDOR_KEY}` },
      model: 'gpt-4o-mini',
    },
    {
      name: 'gateway',
      pid: api.proc.pid!,
      url: `${api.url}${GATEWAY_PATH}`,
      headers: { ...json, authorization: `Bearer ${plain}` },
      model: GATEWAY_MODEL,
    },
    {
      name: 'gateway, observability off',
      pid: untraced.proc.pid!,
      url: `${untraced.url}${GATEWAY_PATH}`,
      headers: { ...json, authorization: `Bearer ${plain}` },
      model: GATEWAY_MODEL,
    },
    {
      name: 'gateway + limit & budget',
      pid: api.proc.pid!,
      url: `${api.url}${GATEWAY_PATH}`,
      headers: { ...json, authorization: `Bearer ${limited}` },
      model: GATEWAY_MODEL,
    },
  ];
  variants.forEach((v, k) =>
    targets.push({
      name: `gateway, ${JSON.stringify(VARIANT_ENVS[k])}`,
      pid: v.proc.pid!,
      url: `${v.url}${GATEWAY_PATH}`,
      headers: { ...json, authorization: `Bearer ${plain}` },
      model: GATEWAY_MODEL,
    }),
  );
  /** Index of the first cost cell's target. */
  const costIdx = targets.length;
  for (const { name, child } of costCells)
    targets.push({
      name: `gateway, ${name}`,
      pid: child.proc.pid!,
      url: `${child.url}${GATEWAY_PATH}`,
      headers: { ...json, authorization: `Bearer ${plain}` },
      model: GATEWAY_MODEL,
    });
  // Tracing on and off in the same process: each traced process
  // also serves requests whose W3C traceparent says "not sampled", so its
  // parent-based sampler records and exports nothing for them. Same process,
  // same JIT, same heap: the process-to-process spread is out of the figure.
  const unsampled = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-00`;
  /** A variant process (target index ≥ 4) started with tracing off. */
  const off = (k: number) => VARIANT_ENVS[k - 4]?.OTEL_SDK_DISABLED === 'true';
  const tracedTargets = [1, ...variants.map((_, k) => 4 + k).filter((k) => !off(k))];
  /** Index of the traced target → index of its same-process unsampled twin. */
  const twins = new Map<number, number>();
  if (SAME_PROCESS)
    for (const k of tracedTargets) {
      twins.set(k, targets.length);
      targets.push({
        ...targets[k]!,
        name: `${targets[k]!.name}, same process, unsampled`,
        headers: { ...targets[k]!.headers, traceparent: unsampled },
      });
    }
  /** Measured in the rounds (the limited key's cells can be left out; its soak stays). */
  const measured = (i: number) => LIMITED || i !== 3;

  for (const [name, child] of [
    ['traced', api],
    ['untraced', untraced],
    ...variants.map((v, k) => [`variant ${k + 1}`, v] as const),
    ...costCells.map((c) => [c.name, c.child] as const),
  ] as const) {
    const m = await child.mem(true);
    console.log(
      `API (${name}) after start-up and setup, before load: RSS ${fmt(m.rss)} MiB, live heap ${MiB(m.heapUsed).toFixed(1)} MiB ` +
        `(committed ${fmt(m.heapTotal)}), external ${fmt(m.external)} MiB`,
    );
  }

  // Not measured: JIT, keep-alive pools and caches of every target warm up first.
  if (!SOAK_ONLY) for (const [i, t] of targets.entries()) if (measured(i)) await load(t, false, 64, WARMUP);

  const rows: Array<Record<string, string | number>> = [];
  const loads: string[] = [];
  for (const stream of SOAK_ONLY ? [] : MODES.map((m) => m === 'stream')) {
    const seq = targets.map(() => ({ p50: [] as number[], p99: [] as number[] }));
    const conc = targets.map(() => ({
      rps: [] as number[],
      cpuUs: [] as number[],
      mainUs: [] as number[],
      pgUs: [] as number[],
      totalUs: [] as number[],
      errors: 0,
    }));
    for (let round = 0; round < ROUNDS; round++) {
      loads.push(loadavg()[0]!.toFixed(2));
      for (const [i, t] of SEQ > 0 ? [...targets.entries()].filter(([j]) => measured(j)) : []) {
        const r = await sequential(t, stream);
        seq[i]!.p50.push(r.p50);
        seq[i]!.p99.push(r.p99);
      }
      // Every other round in reverse: a cell can slow the next one (the traced
      // process's span export and Postgres's work on it outlast its cell).
      // A twin (same process, unsampled) runs right beside its traced cell,
      // before it in every other round (ABBA): the pair sees the same machine.
      const twinOf = new Set(twins.values());
      const order = [...targets.entries()]
        .filter(([i]) => measured(i) && !twinOf.has(i))
        .flatMap(([i, t]) => {
          const twin = twins.get(i);
          return twin === undefined ? [[i, t] as const] : [[i, t] as const, [twin, targets[twin]!] as const];
        });
      if (round % 2 === 1) order.reverse();
      for (const [i, t] of order) {
        await sleep(PAUSE_MS);
        const profiled = PROFILES && (i === 1 || i === 2) ? (i === 1 ? api : untraced) : undefined;
        await profiled?.startProfile();
        const r = await load(t, stream, 64);
        await profiled?.stopProfile(
          `${PROFILES}/${i === 1 ? 'traced' : 'untraced'}-${stream ? 'stream' : 'json'}-${round}.cpuprofile`,
        );
        conc[i]!.rps.push(r.rps);
        conc[i]!.cpuUs.push(r.cpuUs);
        conc[i]!.mainUs.push(r.mainUs);
        conc[i]!.pgUs.push(r.pgUs);
        conc[i]!.totalUs.push(r.totalUs);
        conc[i]!.errors += r.errors;
      }
    }
    const p50 = seq.map((s) => (s.p50.length ? median(s.p50) : NaN));
    const p99 = seq.map((s) => (s.p99.length ? median(s.p99) : NaN));
    const rps = conc.map((c) => median(c.rps));
    targets.forEach((t, i) => {
      if (!measured(i)) return;
      rows.push({
        mode: stream ? 'stream' : 'json',
        target: t.name,
        'c=1 p50 ms': p50[i]!.toFixed(3),
        'c=1 p99 ms': p99[i]!.toFixed(3),
        'added p50 ms': i === 0 ? '' : (p50[i]! - p50[0]!).toFixed(3),
        'added p99 ms': i === 0 ? '' : (p99[i]! - p99[0]!).toFixed(3),
        'c=64 req/s': Math.round(rps[i]!),
        'c=64 rounds': conc[i]!.rps.map((x) => Math.round(x)).join(' '),
        'server CPU µs/req': Math.round(median(conc[i]!.cpuUs)),
        'main thread µs/req': Math.round(median(conc[i]!.mainUs)),
        'Postgres CPU µs/req': Math.round(median(conc[i]!.pgUs)),
        'all CPU µs/req': Math.round(median(conc[i]!.totalUs)),
        errors: conc[i]!.errors,
      });
    });
    // Observability's cost: CPU per request, API + Postgres, per cell.
    const cell = (name: string, k: number) => ({
      name,
      rps: conc[k]!.rps,
      cpuUs: conc[k]!.cpuUs.map((x, r) => x + conc[k]!.pgUs[r]!),
      pgUs: conc[k]!.pgUs,
    });
    reportCostCells(`${stream ? 'stream' : 'json'}, c=64`, [
      cell('default', 1),
      ...costCells.map((c, j) => cell(c.name, costIdx + j)),
      cell('off', 2),
    ]);
    // The same gateway with observability off, same run, same rounds.
    reportTracingCost(stream ? 'stream' : 'json', conc[1]!, conc[2]!);
    // With more than one process on each side: process-to-process differences
    // (JIT, placement) are as large as the effect, so pool them and show A/A.
    for (const [k, twin] of twins)
      reportTracingCost(`${stream ? 'stream' : 'json'}, ${targets[twin]!.name}`, conc[k]!, conc[twin]!);
    if (twins.size > 0)
      reportPooled(
        `${stream ? 'stream' : 'json'}, same process (sampled vs unsampled requests)`,
        [...twins.keys()].map((k) => conc[k]!.rps),
        [...twins.values()].map((k) => conc[k]!.rps),
      );
    const variantIdx = [...targets.keys()].filter((k) => k >= 4 && k < 4 + variants.length);
    const tracedIdx = variantIdx.filter((k) => !off(k));
    const untracedIdx = variantIdx.filter(off);
    for (const k of tracedIdx)
      reportTracingCost(`${stream ? 'stream' : 'json'}, ${targets[k]!.name}`, conc[k]!, conc[2]!);
    if (tracedIdx.length > 0 || untracedIdx.length > 0)
      reportPooled(
        stream ? 'stream' : 'json',
        [1, ...tracedIdx].map((k) => conc[k]!.rps),
        [2, ...untracedIdx].map((k) => conc[k]!.rps),
      );
  }
  console.log(
    `\nbench/gateway — medians of ${ROUNDS} rounds; ${SEQ} sequential requests per c=1 cell, ${SECONDS}s per c=64 cell, ` +
      `node ${process.version}, ${new Date().toISOString()}, 1-min load average at each round: ${loads.join(' ')}`,
  );
  if (rows.length > 0) console.table(rows);

  if (SOAK > 0)
    await soak(targets[3]!, {
      servers: [
        { name: 'traced', child: api },
        { name: 'untraced', child: untraced },
      ],
      baseUrl: api.url,
      load: (t, seconds) => load(t, false, 64, seconds),
      seconds: SOAK,
      warmupSeconds: SOAK_WARMUP,
      restMs: REST_MS,
      snapshots: SNAPSHOTS,
      nodeArgs: API_NODE_ARGS,
    });
} finally {
  for (const v of variants) await v.stop();
  for (const c of costCells) await c.child.stop();
  await untraced.stop();
  await api.stop();
  vendor.stop();
  await scratch.drop();
}
