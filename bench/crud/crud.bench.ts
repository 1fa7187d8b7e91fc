/**
 * bench/crud: GET /agents/{id} and POST /prompts/{name}/versions against the
 * real API (own process, real Postgres), compared in the same run with a bare
 * Koa route returning a constant (the framework floor), at 1 and 32 clients.
 * Target: GET by id at >= 40% of the floor's throughput.
 * Tracing (target <= 10% of throughput, bench/RESULTS.md): the traced API also answers
 * GET by id for requests whose traceparent says "not sampled" (tracing off in
 * the same process), and a second API started with OTEL_SDK_DISABLED=true
 * answers it in the same rounds; the report gives both costs, as the median
 * over ABBA blocks of two rounds (bench/lib/abba.ts) and of per-round ratios.
 * Observability's cost (target ≤ 5% more CPU per request than
 * `otel_sdk_disabled`): GET by id through API processes
 * `default` (the traced one), `always_on`, `otel_sdk_disabled` and `off`
 * (OTEL_SDK_DISABLED and METRICS_ENABLED=false, the "tracing off" one), in
 * ABBA order; CPU per request, API + Postgres, against `off` as the median
 * over ABBA blocks (bench/lib/cost-cells.ts).
 */
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { blockRatios, pctCost } from '../lib/abba.js';
import { COST_CELL_ENVS, reportCostCells } from '../lib/cost-cells.js';
import { cpuSeconds, postgresCpuSeconds } from '../lib/proc-cpu.js';
import { scratchDatabase, spawnServer } from '../lib/scratch.js';

const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
// Interleaved rounds, reported as medians: our 2-core machines are noisy.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** Load on every GET cell before the measured rounds (32 clients): JIT, pools and caches settle. */
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
/** `false`: no `always_on` and `otel_sdk_disabled` processes (observability's cost cells). */
const COST_CELLS = process.env.BENCH_COST_CELLS !== 'false';
/** `false`: no cells of unsampled requests to the traced process. */
const SAME_PROCESS = process.env.BENCH_SAME_PROCESS !== 'false';
/** `false`: no POST /prompts/{name}/versions cells. */
const POST = process.env.BENCH_POST !== 'false';
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Row {
  target: string;
  connections: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU time of the server process per request (µs), when its pid is given: steadier than req/s on a busy machine. */
  cpuUs?: number;
  /** PostgreSQL's CPU per request (µs, every postgres process), when the pid is given. */
  pgUs?: number;
}

async function run(
  target: string,
  opts: autocannon.Options,
  pid?: number,
  duration = DURATION,
): Promise<Row> {
  const cpuBefore = pid === undefined ? 0 : cpuSeconds(pid);
  const pgBefore = pid === undefined ? 0 : postgresCpuSeconds();
  const r = await autocannon({ duration, ...opts });
  const non2xx = r.non2xx + r.errors + r.timeouts;
  const n = Math.max(1, r.requests.total);
  return {
    ...(pid === undefined
      ? {}
      : {
          cpuUs: ((cpuSeconds(pid) - cpuBefore) * 1e6) / n,
          pgUs: ((postgresCpuSeconds() - pgBefore) * 1e6) / n,
        }),
    target,
    connections: opts.connections ?? 1,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: non2xx,
  };
}

const scratch = await scratchDatabase('agent_bench_crud');
// Both APIs share the scratch database, hence one SECRETS_KEY.
const SECRETS_KEY = randomBytes(32).toString('base64');
const api = await spawnServer('api/server.ts', {
  DATABASE_URL: scratch.url,
  TEMPORAL_ADDRESS: '127.0.0.1:1',
  SECRETS_KEY,
});
// Observability off: no spans stored or counted, no metrics (the baseline `off`).
const apiOff = await spawnServer('api/server.ts', {
  DATABASE_URL: scratch.url,
  TEMPORAL_ADDRESS: '127.0.0.1:1',
  SECRETS_KEY,
  ...COST_CELL_ENVS.off,
});
const costApis: Array<{
  name: 'always_on' | 'otel_sdk_disabled';
  child: Awaited<ReturnType<typeof spawnServer>>;
}> = [];
if (COST_CELLS)
  for (const name of ['always_on', 'otel_sdk_disabled'] as const)
    costApis.push({
      name,
      child: await spawnServer('api/server.ts', {
        DATABASE_URL: scratch.url,
        TEMPORAL_ADDRESS: '127.0.0.1:1',
        SECRETS_KEY,
        ...COST_CELL_ENVS[name],
      }),
    });
const floor = await spawnServer('bench/crud/floor-server.ts', {});
try {
  const json = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${api.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const env = (await res.json()) as { data: Record<string, string> & { id: string } };
    if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(env)}`);
    return env.data;
  };
  const project = await json('POST', '/api/agent-server/projects', { name: 'bench' });
  const models: Array<{ id: string }> = await scratch
    .db('models')
    .insert({ project_id: project.id, name: 'm', model_id: 'gpt-4o-mini', provider_type: 'openai' })
    .returning('id');
  const model = models[0];
  await json('POST', `/api/agent-server/prompts?project_id=${project.id}`, {
    name: 'bench-prompt',
    template: 'You are {{role}}.',
    commit_message: 'v1',
  });
  const promptId = (
    await json('GET', `/api/agent-server/prompts/by-name?name=bench-prompt&project_id=${project.id}`)
  ).id;
  const agent = await json('POST', `/api/agent-server/agents?project_id=${project.id}`, {
    name: 'bench-agent',
    model_id: model!.id,
    prompt_id: promptId,
  });

  const unsampled = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-00`;
  const getById = (child: { url: string }) => `${child.url}/api/agent-server/agents/${agent.id}`;
  /** GET by id, one cell per API process (and the traced one's unsampled twin). */
  const getCells = (connections: number, duration = DURATION) => [
    () => run('GET /agents/{id}', { url: getById(api), connections }, api.proc.pid, duration),
    // Tracing on and off in the same process: the same API also answers
    // requests whose W3C traceparent says "not sampled", so its parent-based
    // sampler stores nothing for them (they are still counted).
    ...(SAME_PROCESS
      ? [
          () =>
            run(
              'GET /agents/{id} same process, unsampled',
              { url: getById(api), headers: { traceparent: unsampled }, connections },
              api.proc.pid,
              duration,
            ),
        ]
      : []),
    ...costApis.map(
      ({ name, child }) =>
        () =>
          run(`GET /agents/{id} ${name}`, { url: getById(child), connections }, child.proc.pid, duration),
    ),
    () =>
      run(
        'GET /agents/{id} observability off',
        { url: getById(apiOff), connections },
        apiOff.proc.pid,
        duration,
      ),
  ];
  // Not measured: JIT, pools and caches of every process warm up first.
  if (WARMUP > 0) for (const cell of getCells(32, WARMUP)) await cell();
  const samples: Row[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const connections of [1, 32]) {
      samples.push(await run('floor (bare Koa constant)', { url: `${floor.url}/`, connections }));
      // Every other round in reverse (ABBA): a cell's place in the order
      // cancels over a block of two rounds (bench/lib/abba.ts).
      const cells = getCells(connections);
      if (round % 2 === 1) cells.reverse();
      for (const cell of cells) samples.push(await cell());
      if (POST)
        samples.push(
          await run('POST /prompts/{name}/versions', {
            url: `${api.url}/api/agent-server/prompts/bench-prompt/versions?project_id=${project.id}`,
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ template: 'You are {{role}}, version n.', commit_message: 'bench' }),
            connections,
          }),
        );
    }
  }
  const rows: Row[] = [];
  const cells = samples.filter(
    (s, i) => samples.findIndex((x) => x.target === s.target && x.connections === s.connections) === i,
  );
  for (const s of cells) {
    const same = samples.filter((x) => x.target === s.target && x.connections === s.connections);
    rows.push({
      target: s.target,
      connections: s.connections,
      rps: median(same.map((x) => x.rps)),
      p50: median(same.map((x) => x.p50)),
      p99: median(same.map((x) => x.p99)),
      errors: same.reduce((n, x) => n + x.errors, 0),
      ...(s.cpuUs === undefined
        ? {}
        : { cpuUs: median(same.map((x) => x.cpuUs!)), pgUs: median(same.map((x) => x.pgUs!)) }),
    });
  }
  console.log(
    `\nbench/crud — medians of ${ROUNDS} interleaved rounds, ${DURATION}s per cell, node ${process.version}, ${new Date().toISOString()}`,
  );
  console.table(
    rows.map((r) => {
      const floorRps = rows.find((f) => f.connections === r.connections && f.target.startsWith('floor'))!.rps;
      return {
        target: r.target,
        clients: r.connections,
        'req/s': Math.round(r.rps),
        'p50 ms': r.p50,
        'p99 ms': r.p99,
        'of floor': `${Math.round((100 * r.rps) / floorRps)}%`,
        'API CPU µs/req': r.cpuUs === undefined ? '' : Math.round(r.cpuUs),
        'Postgres CPU µs/req': r.pgUs === undefined ? '' : Math.round(r.pgUs),
        'non-2xx/errors': r.errors,
      };
    }),
  );
  for (const connections of [1, 32]) {
    const pick = (target: string) => rows.find((r) => r.connections === connections && r.target === target)!;
    const perRound = (target: string) =>
      samples.filter((x) => x.connections === connections && x.target === target).map((x) => x.rps);
    const on = pick('GET /agents/{id}');
    // Observability's cost: CPU per request, API + Postgres, per cell.
    const cell = (name: string, target: string) => {
      const rounds = samples.filter((x) => x.connections === connections && x.target === target);
      return {
        name,
        rps: rounds.map((x) => x.rps),
        cpuUs: rounds.map((x) => x.cpuUs! + x.pgUs!),
        pgUs: rounds.map((x) => x.pgUs!),
      };
    };
    reportCostCells(`GET /agents/{id}, ${connections} client(s)`, [
      cell('default', 'GET /agents/{id}'),
      ...costApis.map(({ name }) => cell(name, `GET /agents/{id} ${name}`)),
      cell('off', 'GET /agents/{id} observability off'),
    ]);
    for (const [what, offTarget] of [
      ...(SAME_PROCESS
        ? [
            [
              'same process, sampled vs unsampled requests',
              'GET /agents/{id} same process, unsampled',
            ] as const,
          ]
        : []),
      ['against a process with observability off', 'GET /agents/{id} observability off'],
    ] as const) {
      const off = pick(offTarget);
      const offRounds = perRound(offTarget);
      const ratios = perRound('GET /agents/{id}').map((x, r) => x / offRounds[r]!);
      const blocks = blockRatios(ratios);
      console.log(
        `tracing cost, GET /agents/{id}, ${connections} client(s), ${what}: ` +
          `${blocks.length ? pctCost(median(blocks)) : 'n/a'} of throughput (median over ABBA blocks ` +
          `${blocks.map((x) => x.toFixed(2)).join(' ')}; target <= 10%); median of per-round ratios ${pctCost(median(ratios))} ` +
          `(${ratios.map((x) => x.toFixed(2)).join(' ')}); ` +
          `api CPU ${on.cpuUs!.toFixed(0)} vs ${off.cpuUs!.toFixed(0)} µs/request (+${(100 * (on.cpuUs! / off.cpuUs! - 1)).toFixed(1)}%)`,
      );
    }
  }
  console.log(`API RSS after run: ${(await api.rssMb()).toFixed(0)} MiB`);
} finally {
  await api.stop();
  await apiOff.stop();
  for (const { child } of costApis) await child.stop();
  await floor.stop();
  await scratch.drop();
}
