/**
 * bench/crud: GET /agents/{id} and POST /prompts/{name}/versions against the
 * real API (own process, real Postgres), compared in the same run with a bare
 * Koa route returning a constant (the framework floor), at 1 and 32 clients.
 * Target: GET by id at >= 40% of the floor's throughput.
 * Tracing (issue 8, target <= 10% of throughput): the traced API also answers
 * GET by id for requests whose traceparent says "not sampled" (tracing off in
 * the same process), and a second API started with OTEL_SDK_DISABLED=true
 * answers it in the same rounds; the report gives both costs, as the median
 * over ABBA blocks of two rounds (bench/lib/abba.ts) and of per-round ratios.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { blockRatios, pctCost } from '../lib/abba.js';
import { scratchDatabase, spawnServer } from '../lib/scratch.js';

const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
// Interleaved rounds, reported as medians: our 2-core machines are noisy.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Row {
  target: string;
  connections: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU time of the server process per request (µs), when its pid is given: steadier than req/s on a shared machine. */
  cpuUs?: number;
}

/** utime + stime of a process, in ms (Linux). */
const cpuMs = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
};

async function run(target: string, opts: autocannon.Options, pid?: number): Promise<Row> {
  const cpuBefore = pid === undefined ? 0 : cpuMs(pid);
  const r = await autocannon({ duration: DURATION, ...opts });
  const non2xx = r.non2xx + r.errors + r.timeouts;
  return {
    ...(pid === undefined ? {} : { cpuUs: ((cpuMs(pid) - cpuBefore) * 1000) / r.requests.total }),
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
const apiOff = await spawnServer('api/server.ts', {
  DATABASE_URL: scratch.url,
  TEMPORAL_ADDRESS: '127.0.0.1:1',
  SECRETS_KEY,
  OTEL_SDK_DISABLED: 'true',
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
  const samples: Row[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const connections of [1, 32]) {
      samples.push(await run('floor (bare Koa constant)', { url: `${floor.url}/`, connections }));
      // Tracing on and off in the same process (issue 8): the same API also
      // answers requests whose W3C traceparent says "not sampled", so its
      // parent-based sampler records and exports nothing for them. The pair
      // runs back to back, in the other order every other round.
      const pair = [
        () =>
          run(
            'GET /agents/{id}',
            { url: `${api.url}/api/agent-server/agents/${agent.id}`, connections },
            api.proc.pid,
          ),
        () =>
          run(
            'GET /agents/{id} same process, unsampled',
            {
              url: `${api.url}/api/agent-server/agents/${agent.id}`,
              headers: { traceparent: unsampled },
              connections,
            },
            api.proc.pid,
          ),
      ];
      if (round % 2 === 1) pair.reverse();
      for (const cell of pair) samples.push(await cell());
      samples.push(
        await run(
          'GET /agents/{id} tracing off',
          { url: `${apiOff.url}/api/agent-server/agents/${agent.id}`, connections },
          apiOff.proc.pid,
        ),
      );
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
      ...(s.cpuUs === undefined ? {} : { cpuUs: median(same.map((x) => x.cpuUs!)) }),
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
        'non-2xx/errors': r.errors,
      };
    }),
  );
  for (const connections of [1, 32]) {
    const pick = (target: string) => rows.find((r) => r.connections === connections && r.target === target)!;
    const perRound = (target: string) =>
      samples.filter((x) => x.connections === connections && x.target === target).map((x) => x.rps);
    const on = pick('GET /agents/{id}');
    for (const [what, offTarget] of [
      ['same process, sampled vs unsampled requests', 'GET /agents/{id} same process, unsampled'],
      ['against a process started with OTEL_SDK_DISABLED', 'GET /agents/{id} tracing off'],
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
  await floor.stop();
  await scratch.drop();
}
