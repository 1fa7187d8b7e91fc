/**
 * bench/gateway-peers: our gateway beside a peer, against its speed targets. The
 * same OpenAI chat request, in one run, against the same scripted upstream
 * (bench/gateway/vendor-server.ts), through three targets: `direct` (the
 * vendor itself), `ours` (api/server.ts on a scratch database, default
 * observability settings, a key with no limits) and `portkey` (Portkey's
 * open-source gateway, npm `@portkey-ai/gateway` 1.15.2 from
 * scripts/install-portkey, its own process with its defaults, provider
 * `openai` with the vendor as custom host); plus `ours + limit & budget`, the
 * same API process through a key with a rate limit and a monthly budget too
 * generous ever to refuse.
 * - Concurrency 1: a sequential fetch loop per target; the time per request
 *   is the loop's elapsed time over its count (autocannon's latency has 1 ms
 *   resolution), and added latency = target − direct, per round (target:
 *   ours ≤ 0.5 ms). The p50 of per-request times from performance.now()
 *   and the server's CPU per request from /proc are given for reference.
 * - Concurrency 64: autocannon, req/s and each server's CPU per request from
 *   /proc (Postgres's too); ours/portkey throughput as the median over ABBA
 *   blocks (target ≥ 2×), and the same ratio in CPU per request; limit &
 *   budget / unlimited throughput likewise (target ≥ 70%).
 * Every cell runs BENCH_ROUNDS times, every other round in reverse order
 * (ABBA), and reports medians; the 1-minute load average is printed per
 * round. Modes: `json` and `stream`; Portkey's stream cells run only when a
 * streamed request through it answers 200 with the vendor's text (1.15.2 on
 * Node fails it: see the note printed). Knobs: BENCH_SECONDS (c=64 cell),
 * BENCH_ROUNDS, BENCH_SEQUENTIAL (requests per c=1 cell, 0: none),
 * BENCH_MODES, BENCH_WARMUP_SECONDS, BENCH_PAUSE_MS, BENCH_API_NODE_ARGS and
 * BENCH_CPU_PROFILES (a folder: our API runs with --cpu-prof there, one
 * profile of the whole run written when it stops), BENCH_BASELINE_CHECKOUT
 * (another checkout's API as one more target: an A/B of a change, baseline.ts).
 */
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  apiNodeArgs,
  GATEWAY_MODEL,
  GATEWAY_PATH,
  load,
  median,
  sequential,
  setupGatewayKeys,
  startVendor,
  VENDOR_KEY,
  type LoadResult,
  type Target,
} from '../lib/gateway-targets.js';
import { cpuSeconds } from '../lib/proc-cpu.js';
import { scratchDatabase, spawnServer } from '../lib/scratch.js';
import { BASELINE_CHECKOUT, printAb, startBaseline, type AbCells } from './baseline.js';
import { answer, PORTKEY_VERSION, startPortkey, type Portkey } from './portkey.js';
import { abbaRatio, list, ms, printSummary, signed, summary, verdict } from './summary.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const SEQ = Number(process.env.BENCH_SEQUENTIAL ?? 1500);
/** Even, so that every round belongs to an ABBA block. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const MODES = (process.env.BENCH_MODES ?? 'json,stream').split(',');
/** Load on every target of a mode before its measured rounds (JIT, keep-alive pools, caches). */
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
/** Idle time before each c=64 cell: Postgres, span export and GC catch up with the previous cell. */
const PAUSE_MS = Number(process.env.BENCH_PAUSE_MS ?? 2000);
/** A folder: our API runs with --cpu-prof there (one .cpuprofile of its whole life, written when it stops). */
const PROFILES = process.env.BENCH_CPU_PROFILES;
const CONNECTIONS = 64;

/** Our gateway's speed targets beside a peer (bench/RESULTS.md): added latency at c=1, throughput against Portkey, a metered key against an unlimited one. */
const TARGET_ADDED_MS = 0.5;
const TARGET_VS_PORTKEY = 2;
const TARGET_LIMITED = 0.7;

interface SeqCells {
  perRequest: number[];
  p50: number[];
  /** The target server's CPU per request (unmeasured requests included), µs. */
  cpuUs: number[];
}

const scratch = await scratchDatabase('agent_bench_peers');
const vendor = await startVendor();
const nodeArgs = apiNodeArgs();
if (PROFILES) {
  mkdirSync(PROFILES, { recursive: true });
  nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${path.resolve(PROFILES)}`);
}
// Default observability settings: no OTEL_* or METRICS_* overrides.
const api = await spawnServer(
  'api/server.ts',
  { DATABASE_URL: scratch.url, TEMPORAL_ADDRESS: '127.0.0.1:1', LOG_LEVEL: 'error' },
  { nodeArgs },
);
let portkey: Portkey | undefined;
let baseline: Awaited<ReturnType<typeof startBaseline>> | undefined;
try {
  portkey = await startPortkey();
  const { plain, limited } = await setupGatewayKeys(api.url, vendor.url);
  const json = { 'content-type': 'application/json' };
  const direct: Target = {
    name: 'direct',
    pid: vendor.pid,
    url: `${vendor.url}/v1/chat/completions`,
    headers: { ...json, authorization: `Bearer ${VENDOR_KEY}` },
    model: 'gpt-4o-mini',
  };
  const ours: Target = {
    name: 'ours',
    pid: api.proc.pid!,
    url: `${api.url}${GATEWAY_PATH}`,
    headers: { ...json, authorization: `Bearer ${plain}` },
    model: GATEWAY_MODEL,
  };
  // Portkey appends the endpoint's path (/chat/completions) to the custom host.
  const peer: Target = {
    name: 'portkey',
    pid: portkey.pid,
    url: `${portkey.url}/v1/chat/completions`,
    headers: {
      ...json,
      'x-portkey-provider': 'openai',
      'x-portkey-custom-host': `${vendor.url}/v1`,
      authorization: `Bearer ${VENDOR_KEY}`,
    },
    model: 'gpt-4o-mini',
  };
  const metered: Target = {
    ...ours,
    name: 'ours + limit & budget',
    headers: { ...json, authorization: `Bearer ${limited}` },
  };
  if (BASELINE_CHECKOUT) baseline = await startBaseline(BASELINE_CHECKOUT, vendor.url, ours);
  const base = baseline?.target;
  const targets = [direct, ours, ...(base ? [base] : []), peer, metered];

  // Before measuring: every target answers 200 with the vendor's own answer.
  const excluded = new Map<string, string>();
  for (const mode of MODES) {
    const stream = mode === 'stream';
    const reference = await answer(direct, stream);
    if (reference.status !== 200 || !reference.text)
      throw new Error(`direct (${mode}): HTTP ${reference.status} ${reference.raw.slice(0, 300)}`);
    for (const t of targets.slice(1)) {
      const a = await answer(t, stream);
      const ok = a.status === 200 && a.text === reference.text;
      console.log(
        `check ${mode.padEnd(6)} ${t.name.padEnd(22)} HTTP ${a.status}, ${ok ? "the vendor's answer" : `NOT the vendor's answer: ${a.raw.slice(0, 200)}`}`,
      );
      if (ok) continue;
      if (t === peer && stream) excluded.set(mode, `HTTP ${a.status} ${a.raw.slice(0, 120)}`);
      else throw new Error(`${t.name} (${mode}) does not forward to the vendor`);
    }
  }
  const stderrAtCheck = portkey.stderr.lines;
  if (stderrAtCheck > 0)
    console.log(
      `portkey's stderr so far (${portkey.stderr.lines} lines):\n  ${portkey.stderr.first.join('\n  ')}`,
    );

  const loads: string[] = [];
  for (const mode of MODES) {
    const stream = mode === 'stream';
    const active = targets.filter((t) => !(t === peer && excluded.has(mode)));
    if (excluded.has(mode))
      console.log(
        `\n${mode}: portkey left out (a streamed request through it: ${excluded.get(mode)}; ` +
          `Portkey-AI/gateway#1389 and #1550: it appends headers to a response whose headers are immutable)`,
      );
    for (const t of active)
      await load(t, stream, { connections: CONNECTIONS, seconds: WARMUP, vendorPid: vendor.pid });

    const seq = new Map<Target, SeqCells>(active.map((t) => [t, { perRequest: [], p50: [], cpuUs: [] }]));
    const conc = new Map<Target, LoadResult[]>(active.map((t) => [t, []]));
    for (let round = 0; round < ROUNDS; round++) {
      loads.push(loadavg()[0]!.toFixed(2));
      // ABBA: every other round in reverse, so that no target always follows the same one.
      const order = round % 2 === 1 ? [...active].reverse() : active;
      if (SEQ > 0)
        for (const t of order) {
          const cpu0 = cpuSeconds(t.pid!);
          const r = await sequential(t, stream, SEQ);
          seq.get(t)!.perRequest.push(r.perRequest);
          seq.get(t)!.p50.push(r.p50);
          seq.get(t)!.cpuUs.push(((cpuSeconds(t.pid!) - cpu0) * 1e6) / (SEQ + 100));
        }
      for (const t of order) {
        await sleep(PAUSE_MS);
        conc
          .get(t)!
          .push(await load(t, stream, { connections: CONNECTIONS, seconds: SECONDS, vendorPid: vendor.pid }));
      }
    }

    console.log(
      `\n${mode}, concurrency 1: ${SEQ} sequential requests per cell (after 100 unmeasured), ${ROUNDS} rounds in ABBA order; ` +
        `time per request = elapsed / count; added = target − direct in the same round, median over rounds`,
    );
    if (SEQ > 0) {
      const d = seq.get(direct)!;
      console.table(
        active.map((t) => {
          const s = seq.get(t)!;
          const added = s.perRequest.map((x, r) => x - d.perRequest[r]!);
          const addedP50 = s.p50.map((x, r) => x - d.p50[r]!);
          return {
            target: t.name,
            'ms/request': ms(median(s.perRequest)),
            'added ms': t === direct ? '' : signed(median(added)),
            'added, rounds': t === direct ? '' : list(added, 3),
            'p50 ms (performance.now)': ms(median(s.p50)),
            'added p50 ms': t === direct ? '' : signed(median(addedP50)),
            'server CPU µs/req': Math.round(median(s.cpuUs)),
          };
        }),
      );
      const addedOf = (t: Target) => median(seq.get(t)!.perRequest.map((x, r) => x - d.perRequest[r]!));
      const oursAdded = addedOf(ours);
      summary.push(
        [
          mode,
          'added latency, c=1, ours',
          `${signed(oursAdded)} ms`,
          `target ≤ ${TARGET_ADDED_MS} ms`,
          verdict(oursAdded <= TARGET_ADDED_MS),
          `(p50 of per-request times: ${signed(median(seq.get(ours)!.p50.map((x, r) => x - d.p50[r]!)))} ms)`,
        ],
        [
          mode,
          'added latency, c=1, portkey',
          seq.has(peer) ? `${signed(addedOf(peer))} ms` : 'n/a',
          '',
          'reference',
          seq.has(peer) ? '' : `(left out: ${excluded.get(mode)})`,
        ],
        [
          mode,
          'added latency, c=1, ours + limit & budget',
          `${signed(addedOf(metered))} ms`,
          '',
          'reference',
          '',
        ],
      );
    }

    console.log(
      `\n${mode}, concurrency ${CONNECTIONS}: ${SECONDS}s autocannon cells, ${ROUNDS} rounds in ABBA order, medians over rounds; ` +
        `CPU µs per request from /proc (server: the target's process; Postgres: every PostgreSQL process on the machine, so direct's and ` +
        `portkey's column is the machine's other PostgreSQL work; all: server, Postgres, the vendor behind a gateway and the load generator)`,
    );
    console.table(
      active.map((t) => {
        const c = conc.get(t)!;
        return {
          target: t.name,
          'req/s': Math.round(median(c.map((x) => x.rps))),
          rounds: c.map((x) => Math.round(x.rps)).join(' '),
          'server CPU µs/req': Math.round(median(c.map((x) => x.cpuUs))),
          'main thread µs/req': Math.round(median(c.map((x) => x.mainUs))),
          'Postgres µs/req': Math.round(median(c.map((x) => x.pgUs))),
          'server + Postgres µs/req':
            t.pid === ours.pid ? Math.round(median(c.map((x) => x.cpuUs + x.pgUs))) : '',
          'all CPU µs/req': Math.round(median(c.map((x) => x.totalUs))),
          errors: c.reduce((n, x) => n + x.errors, 0),
        };
      }),
    );
    const rps = (t: Target) => conc.get(t)!.map((x) => x.rps);
    const cpu = (t: Target, pg: boolean) => conc.get(t)!.map((x) => x.cpuUs + (pg ? x.pgUs : 0));
    const errors = (t: Target) => conc.get(t)!.reduce((n, x) => n + x.errors, 0);
    const errNote = (...ts: Target[]) => {
      const n = ts.reduce((s, t) => s + errors(t), 0);
      return n ? ` (${n} errors!)` : '';
    };

    if (conc.has(peer)) {
      const thr = abbaRatio(rps(ours), rps(peer));
      // CPU terms: Portkey's CPU per request over ours (with and without Postgres's share).
      const cpuApi = abbaRatio(cpu(peer, false), cpu(ours, false));
      const cpuAll = abbaRatio(cpu(peer, false), cpu(ours, true));
      console.log(
        `${mode}: throughput ours/portkey ×${thr.ratio.toFixed(2)} (median over ABBA blocks ${list(thr.blocks)}; rounds ${list(thr.rounds)}); ` +
          `in CPU per request, portkey/ours: ×${cpuApi.ratio.toFixed(2)} our API process alone, ×${cpuAll.ratio.toFixed(2)} with Postgres's share ` +
          `(blocks ${list(cpuApi.blocks)} / ${list(cpuAll.blocks)})`,
      );
      summary.push([
        mode,
        `throughput, c=${CONNECTIONS}, ours/portkey`,
        `×${thr.ratio.toFixed(2)}`,
        `target ≥ ${TARGET_VS_PORTKEY}×`,
        verdict(thr.ratio >= TARGET_VS_PORTKEY),
        `(CPU per request portkey/ours ×${cpuApi.ratio.toFixed(2)}, ×${cpuAll.ratio.toFixed(2)} with Postgres's share)${errNote(ours, peer)}`,
      ]);
    } else {
      summary.push([
        mode,
        `throughput, c=${CONNECTIONS}, ours/portkey`,
        'n/a',
        `target ≥ ${TARGET_VS_PORTKEY}×`,
        'n/a',
        `(left out: ${excluded.get(mode)})`,
      ]);
    }

    if (base) {
      const cells = (t: Target): AbCells => ({
        seqMs: seq.get(t)!.perRequest,
        seqCpuUs: seq.get(t)!.cpuUs,
        rps: rps(t),
        cpuUs: cpu(t, false),
      });
      printAb(mode, cells(ours), cells(base));
    }

    const lim = abbaRatio(rps(metered), rps(ours));
    const limCpu = abbaRatio(cpu(ours, true), cpu(metered, true));
    const pg = (t: Target) => Math.round(median(conc.get(t)!.map((x) => x.pgUs)));
    console.log(
      `${mode}: limit & budget / unlimited ${(100 * lim.ratio).toFixed(1)}% of the throughput (median over ABBA blocks ${list(lim.blocks)}; ` +
        `rounds ${list(lim.rounds)}); in CPU per request (API + Postgres) ${(100 * limCpu.ratio).toFixed(1)}%; ` +
        `Postgres CPU per request: ${pg(metered)} µs with limit & budget, ${pg(ours)} µs unlimited`,
    );
    summary.push([
      mode,
      `limit & budget / unlimited, c=${CONNECTIONS}`,
      `${(100 * lim.ratio).toFixed(1)}%`,
      `target ≥ ${100 * TARGET_LIMITED}%`,
      verdict(lim.ratio >= TARGET_LIMITED),
      `(Postgres CPU ${pg(metered)} vs ${pg(ours)} µs/request)${errNote(ours, metered)}`,
    ]);
  }

  if (portkey.stderr.lines > stderrAtCheck)
    console.log(
      `\nportkey wrote ${portkey.stderr.lines - stderrAtCheck} more lines to stderr during the measurements`,
    );
  console.log(
    `\nbench/gateway-peers — ${ROUNDS} rounds; ${SEQ} sequential requests per c=1 cell, ${SECONDS}s per c=${CONNECTIONS} cell; ` +
      `node ${process.version} for every process; ours: default observability settings${nodeArgs.length ? `, node flags ${nodeArgs.join(' ')}` : ''}; ` +
      `portkey: @portkey-ai/gateway ${PORTKEY_VERSION}, its defaults; ${new Date().toISOString()}; ` +
      `1-min load average at each round: ${loads.join(' ')}`,
  );
  printSummary();
} finally {
  await api.stop();
  await baseline?.stop();
  await portkey?.stop();
  vendor.stop();
  await scratch.drop();
  if (PROFILES) console.log(`CPU profile of our API (the whole run) in ${path.resolve(PROFILES)}`);
}
