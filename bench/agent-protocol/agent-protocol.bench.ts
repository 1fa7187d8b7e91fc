/**
 * bench/agent-protocol: the Agent Protocol door (`/api/langgraph/{project_id}`)
 * against our own converse door, in the same run, on the same platform (API
 * and worker as their own processes, the Temporal dev server, Postgres) and
 * the same scripted OpenAI-format model answering a one-step turn (text, no
 * tools) at once.
 *
 *  - latency: one-step turns through `client.runs.wait` of the official
 *    `@langchain/langgraph-sdk` Client, through a plain fetch of the same
 *    `POST /threads/{id}/runs/wait` (the SDK's own part apart), and through
 *    `POST /converse` (plain fetch, waiting for the end). A round runs one
 *    block per door, each door in each place as often (ORDERS); a block is a fresh thread
 *    (created through `POST /threads`, not timed, and used by converse as its
 *    conversation id too: threads are conversations) and TURNS turns on it.
 *    Turn k of a door's block is paired with turn k of converse's in the same
 *    round. Also the API process's CPU time per turn for each door, from
 *    /proc schedstat over each block (plus a short settle after it).
 *  - throughput: turns/s with 20 users at once, each with its own SDK Client
 *    (one Client sends at most 4 requests at a time by default) on its own
 *    thread, against 20 conversations through converse; LOAD_TURNS turns each,
 *    threads created before the clock starts; cells in ABBA order.
 * Target: the protocol adds ≤ 2 ms p50 to a one-step turn.
 *
 * Run: flock /tmp/test.lock npm run bench -- agent-protocol
 * BENCH_QUICK=1 for a smoke run; BENCH_AP_ROUNDS (24), BENCH_AP_TURNS (10),
 * BENCH_AP_LOAD_ROUNDS (6), BENCH_AP_LOAD_TURNS (10); BENCH_AP_PROFILE=1 also
 * takes a CPU profile of the API over BENCH_AP_PROFILE_TURNS (200) turns per
 * door and compares where the time goes.
 */
import { cpus, loadavg } from 'node:os';
import { Client } from '@langchain/langgraph-sdk';
import { startAnsweringVendor } from '../lib/answering-vendor.js';
import { median, pct, signed } from '../lib/stats.js';
import { blockRatios } from '../lib/abba.js';
import { benchAgent, startPlatform } from '../lib/platform.js';
import { doorSpans, rootNames } from './door-spans.js';
import { compare, merge, summarize } from './profile-summary.js';
import { taskCpuNs } from './task-cpu.js';

const QUICK = process.env.BENCH_QUICK === '1';
const env = (name: string, full: number, quick: number) =>
  Number(process.env[name] ?? (QUICK ? quick : full));
const ROUNDS = env('BENCH_AP_ROUNDS', 24, 2);
const TURNS = env('BENCH_AP_TURNS', 10, 3);
const LOAD_ROUNDS = env('BENCH_AP_LOAD_ROUNDS', 6, 2);
const LOAD_TURNS = env('BENCH_AP_LOAD_TURNS', 10, 2);
const PROFILE = process.env.BENCH_AP_PROFILE === '1';
const PROFILE_TURNS = env('BENCH_AP_PROFILE_TURNS', 200, 20);
const WARM_ROUNDS = QUICK ? 1 : 2;
const USERS = 20;
/** After a block, before reading the API's CPU: work that follows the answer (the run's close) lands in it. */
const SETTLE_MS = 20;
const ANSWER = 'Hello there, this is the scripted answer.';

const ms = (x: number, digits = 1) => `${x.toFixed(digits)} ms`;
const sleep = (n: number) => new Promise((r) => setTimeout(r, n));

// ---- The scripted model, in this process: a text answer at once ----
const vendor = await startAnsweringVendor(ANSWER);
const vendorUrl = vendor.url;

// ---- Platform: Temporal dev server, Postgres, API and worker processes ----
const platform = await startPlatform(
  'agent_protocol',
  { OTEL_SDK_DISABLED: process.env.OTEL_SDK_DISABLED ?? 'false' },
  { probe: PROFILE },
);
const apiPid = platform.api.proc.pid!;
const { projectId, q, agentId } = await benchAgent(platform, vendorUrl);
const base = `${platform.url}/api/langgraph/${projectId}`;
const client = new Client({ apiUrl: base });

type Door = 'sdk' | 'fetch' | 'converse';
type Values = { messages: Array<{ type: string; content: unknown }> };
const input = (text: string) => ({ messages: [{ type: 'human', content: text }] });

function answered(values: Values): void {
  const last = values.messages.at(-1);
  if (last?.type !== 'ai' || last.content !== ANSWER) throw new Error(`no answer: ${JSON.stringify(last)}`);
}

async function post<T>(url: string, body: unknown): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as T;
  if (res.status !== 200) throw new Error(`POST ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** One one-step turn through a door, until its end. */
async function turn(door: Door, threadId: string, text: string, sdk = client): Promise<void> {
  if (door === 'sdk')
    return answered((await sdk.runs.wait(threadId, agentId, { input: input(text) })) as Values);
  if (door === 'fetch')
    return answered(
      await post<Values>(`${base}/threads/${threadId}/runs/wait`, {
        assistant_id: agentId,
        input: input(text),
      }),
    );
  const { data } = await post<{ data: { status: string; error?: unknown } }>(
    `${platform.url}/api/agent-server/converse${q}`,
    {
      agent_id: agentId,
      conversation_id: threadId,
      message: text,
    },
  );
  if (data.status !== 'completed')
    throw new Error(`converse turn ${data.status}: ${JSON.stringify(data.error)}`);
}

const threadCreates: number[] = [];
async function newThread(sdk = client): Promise<string> {
  const t = performance.now();
  const { thread_id } = await sdk.threads.create();
  threadCreates.push(performance.now() - t);
  return thread_id;
}

console.log(
  `machine: ${process.platform} ${process.arch}, node ${process.version}, cores ${cpus().length}, load ${loadavg()[0]!.toFixed(2)}`,
);
console.log(
  `latency: ${ROUNDS} rounds (+${WARM_ROUNDS} warm-up) × 3 doors × ${TURNS} turns on a fresh thread; throughput: ${LOAD_ROUNDS} rounds × 2 doors × ${USERS} users × ${LOAD_TURNS} turns`,
);

// ---- (a) latency and CPU per turn, ABBA over rounds ----
const DOORS: Door[] = ['sdk', 'fetch', 'converse'];
/**
 * Every order of the three doors, each followed by its reverse: over six
 * rounds each door takes each place twice (a door always in the middle would
 * carry its place in every comparison), and each pair of rounds is ABBA for
 * every two doors.
 */
const ORDERS: Door[][] = [
  ['sdk', 'fetch', 'converse'],
  ['converse', 'fetch', 'sdk'],
  ['fetch', 'converse', 'sdk'],
  ['sdk', 'converse', 'fetch'],
  ['converse', 'sdk', 'fetch'],
  ['fetch', 'sdk', 'converse'],
];
const lat: Record<Door, number[][]> = { sdk: [], fetch: [], converse: [] };
const cpu: Record<Door, { all: number; main: number; turns: number }> = {
  sdk: { all: 0, main: 0, turns: 0 },
  fetch: { all: 0, main: 0, turns: 0 },
  converse: { all: 0, main: 0, turns: 0 },
};
const latFrom = new Date();
for (let round = 0; round < WARM_ROUNDS + ROUNDS; round++) {
  const order = ORDERS[round % ORDERS.length]!;
  for (const door of order) {
    const threadId = await newThread();
    const times: number[] = [];
    const before = taskCpuNs(apiPid);
    for (let k = 0; k < TURNS; k++) {
      const t = performance.now();
      await turn(door, threadId, `question ${k}`);
      times.push(performance.now() - t);
    }
    await sleep(SETTLE_MS);
    const after = taskCpuNs(apiPid);
    if (round < WARM_ROUNDS) continue;
    lat[door].push(times);
    cpu[door].all += after.all - before.all;
    cpu[door].main += after.main - before.main;
    cpu[door].turns += TURNS;
  }
}
const latTo = new Date();

const all = (door: Door) => lat[door].flat();
/** Turn k of a door's block minus turn k of converse's, same round. */
const paired = (door: Door) => lat[door].flatMap((times, r) => times.map((t, k) => t - lat.converse[r]![k]!));
/** Per round the median paired difference; per ABBA block of two rounds their mean; the median of those. */
const blocks = (door: Door) => {
  const perRound = lat[door].map((times, r) => median(times.map((t, k) => t - lat.converse[r]![k]!)));
  const out: number[] = [];
  for (let r = 0; r + 1 < perRound.length; r += 2) out.push((perRound[r]! + perRound[r + 1]!) / 2);
  return out;
};
const cpuPerTurn = (door: Door) => ({
  all: cpu[door].all / 1e6 / cpu[door].turns,
  main: cpu[door].main / 1e6 / cpu[door].turns,
});

console.log(
  '\n| door | turns | p50 | p95 | API CPU / turn (all threads) | API main thread / turn |\n|---|---|---|---|---|---|',
);
const label: Record<Door, string> = {
  sdk: '`client.runs.wait` (SDK)',
  fetch: '`POST …/runs/wait` (fetch)',
  converse: '`POST /converse` (fetch)',
};
for (const door of DOORS) {
  const c = cpuPerTurn(door);
  console.log(
    `| ${label[door]} | ${all(door).length} | ${ms(pct(all(door), 50))} | ${ms(pct(all(door), 95))} | ${ms(c.all, 2)} | ${ms(c.main, 2)} |`,
  );
}
console.log('\nadded by the protocol door (target ≤ 2 ms p50):');
for (const door of ['sdk', 'fetch'] as const) {
  const b = blocks(door);
  console.log(
    `  ${label[door]}: p50 − p50 ${signed(pct(all(door), 50) - pct(all('converse'), 50))}; median of paired differences ${signed(median(paired(door)))}; ABBA blocks ${b.map((x) => signed(x)).join(' ')} (median ${signed(median(b))}); API CPU ${signed(cpuPerTurn(door).all - cpuPerTurn('converse').all)} / turn, main thread ${signed(cpuPerTurn(door).main - cpuPerTurn('converse').main)}`,
  );
}
console.log(
  `  thread creation (POST /threads through the SDK, not timed in the turns): p50 ${ms(pct(threadCreates, 50))}`,
);

// ---- (b) throughput: 20 users at once, ABBA over rounds ----
async function load(door: 'sdk' | 'converse'): Promise<{ perSecond: number; cpuMs: number }> {
  const users = await Promise.all(
    Array.from({ length: USERS }, async () => {
      const sdk = new Client({ apiUrl: base });
      return { sdk, threadId: await newThread(sdk) };
    }),
  );
  const before = taskCpuNs(apiPid);
  const t0 = performance.now();
  await Promise.all(
    users.map(async (u) => {
      for (let k = 0; k < LOAD_TURNS; k++) await turn(door, u.threadId, `load ${k}`, u.sdk);
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  const cpuNs = taskCpuNs(apiPid).all - before.all;
  return { perSecond: (USERS * LOAD_TURNS) / elapsed, cpuMs: cpuNs / 1e6 / (USERS * LOAD_TURNS) };
}
await load('sdk');
await load('converse');
const tput = {
  sdk: [] as number[],
  converse: [] as number[],
  sdkCpu: [] as number[],
  converseCpu: [] as number[],
};
for (let round = 0; round < LOAD_ROUNDS; round++) {
  const order =
    round % 4 === 1 || round % 4 === 2 ? (['converse', 'sdk'] as const) : (['sdk', 'converse'] as const);
  for (const door of order) {
    const r = await load(door);
    tput[door].push(r.perSecond);
    tput[door === 'sdk' ? 'sdkCpu' : 'converseCpu'].push(r.cpuMs);
  }
  console.log(
    `load round ${round + 1}: runs.wait ${tput.sdk.at(-1)!.toFixed(1)} turns/s, converse ${tput.converse.at(-1)!.toFixed(1)} turns/s`,
  );
}
const ratios = blockRatios(tput.sdk.map((s, i) => s / tput.converse[i]!));
console.log(
  `\nthroughput, ${USERS} at once: runs.wait (SDK) ${median(tput.sdk).toFixed(1)} turns/s, converse ${median(tput.converse).toFixed(1)} turns/s (medians); ` +
    `ratio over ABBA blocks ${ratios.map((x) => `×${x.toFixed(3)}`).join(' ')} (median ×${median(ratios).toFixed(3)}); ` +
    `API CPU / turn ${ms(median(tput.sdkCpu), 2)} vs ${ms(median(tput.converseCpu), 2)}`,
);

// ---- Where the protocol's added time goes ----
if (PROFILE) {
  /** The API's CPU profile over `turns` turns of a door (threads made before it starts, 10 turns each). */
  const profiled = async (door: Door, turns: number, name: string) => {
    const threads = await Promise.all(Array.from({ length: Math.ceil(turns / 10) }, () => newThread()));
    await platform.api.startProfile();
    for (let k = 0; k < turns; k++) await turn(door, threads[Math.floor(k / 10)]!, `profiled ${k}`);
    await sleep(SETTLE_MS);
    return summarize(await platform.api.stopProfile(`/tmp/agent-protocol-${name}-${process.pid}.cpuprofile`));
  };
  await profiled('sdk', 10, 'warm-up'); // the inspector's first start is slow: not in a door's figures
  // A B B A: neither door always goes first.
  const half = Math.ceil(PROFILE_TURNS / 2);
  const a1 = await profiled('sdk', half, 'runs-wait-1');
  const b1 = await profiled('converse', half, 'converse-1');
  const b2 = await profiled('converse', half, 'converse-2');
  const a2 = await profiled('sdk', half, 'runs-wait-2');
  console.log(
    `\nCPU profiles of the API in /tmp/agent-protocol-*-${process.pid}.cpuprofile, ${2 * half} turns per door`,
  );
  console.log('A = runs.wait (SDK), B = converse: sampled self time on the API main thread, per turn');
  console.log(compare(merge(a1, a2), 2 * half, merge(b1, b2), 2 * half));
}

await sleep(6_000); // the span exporter's batch delay
const roots = await rootNames(platform.db, latFrom, latTo);
for (const root of [roots.find((n) => n.endsWith('/runs/wait')), 'POST /api/agent-server/converse']) {
  if (!root) continue;
  const lines = await doorSpans(platform.db, root, latFrom, latTo);
  console.log(
    `\n${root}, span by span (median start after the request began / median duration / per request):`,
  );
  for (const l of lines)
    console.log(
      `  ${ms(l.startMs, 2).padStart(9)} +${ms(l.durMs, 2).padStart(9)}  ×${l.perRequest.toFixed(1)}  ${l.what}`,
    );
  // The door's own reads show as queries converse does not make.
  const queries = lines.filter((l) => l.what.startsWith('agent-server-api pg '));
  const count = queries.reduce((n, l) => n + l.perRequest, 0);
  const total = queries.reduce((n, l) => n + l.perRequest * l.durMs, 0);
  console.log(
    `  the API's queries: ${count.toFixed(1)} per request, ${ms(total, 2)} (sum of median durations)`,
  );
}

await platform.stop();
vendor.close();
process.exit(0);
