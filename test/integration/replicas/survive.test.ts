/**
 * Proof that replicas survive each other (issue 26): two API and two worker
 * processes (the production entry points) against one Temporal dev server
 * with a database file and the test's own embedded PostgreSQL; twenty
 * conversations stream at once through the scripted vendor, their clients
 * spread over both APIs. Each fault is one `it`, in order, sharing the set-up;
 * each prints a summary line (messages lost, duplicated, failed turns, and
 * the recovery time from the fault to each affected turn's completion).
 */
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAiVendor } from '../../fixtures/vendors/openai.js';
import type { ScriptedVendor } from '../../fixtures/vendors/scripted-server.js';
import { alive, call, Cluster, killHard, type ApiProc } from './cluster.js';
import { hasDelta, percentiles, startTurn, verify, type Turn, type Verdict } from './turns.js';

const TURNS = 20;
/** 60 words at 150 ms each: a turn streams for about 9 s. */
const ANSWER = Array.from({ length: 60 }, (_, i) => `word${i + 1}`).join(' ');
const CHUNK_DELAY_MS = 150;
const TURN_TIMEOUT_MS = 90_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitUntil(what: string, cond: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

describe('replicas that survive each other', () => {
  const cluster = new Cluster();
  let vendor: ScriptedVendor;
  let projectId = '';
  let agentId = '';
  let virtualKey = '';
  let providerId = '';

  const liveApis = () => cluster.apis.filter(alive).map((a) => a.url);

  /** Back to two live APIs and two live workers after a fault. */
  async function ensureReplicas(): Promise<void> {
    cluster.apis = cluster.apis.filter(alive);
    cluster.workers = cluster.workers.filter(alive);
    const apis = Array.from({ length: 2 - cluster.apis.length }, () => cluster.spawnApi());
    const workers = Array.from({ length: 2 - cluster.workers.length }, () => cluster.spawnWorker());
    cluster.apis.push(...(await Promise.all(apis)));
    cluster.workers.push(...(await Promise.all(workers)));
  }

  /** Twenty turns, client i starting on API i % 2; resolves once every one has streamed a delta. */
  async function startTurns(label: string): Promise<{ turns: Turn[]; done: Promise<Turn[]> }> {
    vendor.reset();
    // Enough for every turn's call and a second call of each (a retried one).
    vendor.script(
      ...Array.from({ length: TURNS * 3 }, () => ({
        reply: { text: ANSWER, usage: { input: 10, output: 40 } },
        chunkDelayMs: CHUNK_DELAY_MS,
      })),
    );
    const apis = cluster.apis.map((a) => a.url);
    const started = Array.from({ length: TURNS }, (_, i) =>
      startTurn({
        index: i,
        first: apis[i % apis.length]!,
        live: liveApis,
        projectId,
        agentId,
        message: `${label} ${i}`,
        timeoutMs: TURN_TIMEOUT_MS,
      }),
    );
    const turns = started.map((s) => s.turn);
    const done = Promise.all(started.map((s) => s.done));
    const t0 = performance.now();
    await waitUntil('a delta in every turn', () => turns.every(hasDelta), 60_000);
    console.log(
      `[replicas] ${label}: every turn streaming after ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    return { turns, done };
  }

  function summary(fault: string, v: Verdict, recovery: number[], extra = ''): void {
    const { p50, max } = percentiles(recovery);
    console.log(
      `[replicas] ${fault}: messages lost ${v.lost}, duplicated ${v.duplicated}, failed turns ${v.failed}, ` +
        `restarted answers ${v.restarted}, recovery p50 ${(p50 / 1000).toFixed(1)} s max ${(max / 1000).toFixed(1)} s ` +
        `(over ${recovery.length} turns)${extra}`,
    );
    if (v.problems.length) console.log(`[replicas] ${fault} problems:\n  ${v.problems.join('\n  ')}`);
  }

  beforeAll(async () => {
    await cluster.start();
    await ensureReplicas();
    vendor = await startOpenAiVendor();
    const api = cluster.apis[0]!.url;
    const project = await call(api, 'POST', '/api/agent-server/projects', { name: 'replicas' });
    projectId = project.id!;
    const provider = await call(api, 'POST', '/api/agent-server/providers', {
      name: 'vendor',
      provider_type: 'openai',
      base_url: `${vendor.url}/v1`,
      api_key: 'sk-vendor-replicas',
    });
    const model = await call(api, 'POST', `/api/agent-server/models?project_id=${projectId}`, {
      name: 'model',
      model_id: 'gpt-test',
      provider_type: 'openai',
      provider_id: provider.id,
      // Priced, so a key with a budget can call it through the gateway.
      pricing: { input_per_million_usd: 10, output_per_million_usd: 10 },
    });
    const prompt = await call(api, 'POST', `/api/agent-server/prompts?project_id=${projectId}`, {
      name: 'prompt',
      template: 'Be brief.',
      commit_message: 'first',
    });
    const agent = await call(api, 'POST', `/api/agent-server/agents?project_id=${projectId}`, {
      name: 'agent',
      model_id: model.id,
      prompt_id: prompt.id,
    });
    agentId = agent.id!;
    providerId = provider.id!;
    const key = await call(api, 'POST', '/api/agent-server/virtual-keys', {
      name: 'replicas',
      providers: [{ provider_id: provider.id, model_names: ['*'] }],
    });
    virtualKey = key.secret_key!;
  }, 240_000);

  afterAll(async () => {
    await vendor?.close();
    await cluster.stop();
  }, 120_000);

  it('kill -9 of an API: its clients resume on the other with Last-Event-ID, every event exactly once', async () => {
    await ensureReplicas();
    const victim = cluster.apis[0]!;
    const { turns, done } = await startTurns('api-kill');
    const killedAt = performance.now();
    await killHard(victim);
    const finished = await done;
    const v = await verify(finished, ANSWER, cluster.apis[1]!.url, cluster.db);
    const affected = finished.filter((t) => t.servedBy[0] === victim.url);
    // Kill → the first event the client got on its new stream.
    const resumed = percentiles(
      affected.flatMap((t) => {
        const next = t.events.find((e) => e.at > killedAt);
        return t.reconnects > 0 && next ? [next.at - killedAt] : [];
      }),
    );
    summary(
      'kill -9 API',
      v,
      affected.map((t) => (t.endedAt ?? killedAt) - killedAt),
      `; ${affected.filter((t) => t.reconnects > 0).length}/${affected.length} clients of the killed API reconnected, ` +
        `first event from the other API after p50 ${(resumed.p50 / 1000).toFixed(2)} s max ${(resumed.max / 1000).toFixed(2)} s`,
    );
    expect(v.problems).toEqual([]);
    expect(turns.every((t) => t.events.at(-1)?.event === 'run.completed')).toBe(true);
    // Every client of the killed API that had not finished ended on the other one (a reconnect
    // made before the kill was noticed may have been refused by the dead one first).
    for (const t of affected) if (t.reconnects > 0) expect(t.servedBy.at(-1)).not.toBe(victim.url);
    expect(affected.some((t) => t.reconnects > 0)).toBe(true);
    // The other API's clients were not disturbed.
    expect(finished.filter((t) => t.servedBy[0] !== victim.url).every((t) => t.reconnects === 0)).toBe(true);
  }, 240_000);

  it('kill -9 of a worker mid-turn: every turn finishes on the other, once', async () => {
    await ensureReplicas();
    const victim = cluster.workers[0]!;
    const { done } = await startTurns('worker-kill');
    const killedAt = performance.now();
    await killHard(victim);
    const finished = await done;
    const v = await verify(finished, ANSWER, cluster.apis[0]!.url, cluster.db);
    // Affected: the turns whose model call was cut and made again on the other worker (the
    // vendor got their user message twice).
    const calls = (t: Turn) =>
      vendor.received.filter((r) => JSON.stringify(r.body.messages).includes(`"worker-kill ${t.index}"`))
        .length;
    const affected = finished.filter((t) => calls(t) > 1);
    const all = finished.map((t) => (t.endedAt ?? killedAt) - killedAt);
    const { p50, max } = percentiles(all);
    summary(
      'kill -9 worker',
      v,
      affected.map((t) => (t.endedAt ?? killedAt) - killedAt),
      `; all ${finished.length} turns: p50 ${(p50 / 1000).toFixed(1)} s max ${(max / 1000).toFixed(1)} s; ` +
        `${vendor.received.length} model calls, ${vendor.aborted} cut`,
    );
    expect(affected.length).toBeGreaterThan(0);
    expect(v.lost).toBe(0);
    expect(v.duplicated).toBe(0);
    expect(v.failed).toBe(0);
    expect(v.problems).toEqual([]);
  }, 240_000);

  /**
   * A service every process depends on goes away mid-turn and comes back: the
   * turns are delayed, none fails, no model call is made twice, and every
   * process rides it out.
   */
  async function serviceRestart(label: string, name: string, restart: () => Promise<void>) {
    await ensureReplicas();
    const { done } = await startTurns(label);
    const faultAt = performance.now();
    await restart();
    const finished = await done;
    const v = await verify(finished, ANSWER, cluster.apis[0]!.url, cluster.db);
    const inProgress = finished.filter((t) => !t.endedAt || t.endedAt > faultAt);
    summary(
      name,
      v,
      inProgress.map((t) => (t.endedAt ?? faultAt) - faultAt),
      `; ${inProgress.length}/${finished.length} turns in progress at the fault; ` +
        `${vendor.received.length} model calls, ${vendor.aborted} cut`,
    );
    expect(inProgress.length).toBeGreaterThan(TURNS / 2);
    expect(v.problems).toEqual([]);
    // An answer already paid for waits out the outage: no model call is made twice.
    expect(vendor.received).toHaveLength(TURNS);
    expect(cluster.apis.every(alive) && cluster.workers.every(alive)).toBe(true);
  }

  it(
    'restart of the Temporal dev server (same database file): turns are delayed, none fails',
    () =>
      serviceRestart('temporal-restart', 'Temporal dev server restart', () => cluster.restartTemporal(1_000)),
    240_000,
  );

  it('rolling restart (SIGTERM, one at a time) of both APIs under gateway load: no failed request', async () => {
    await ensureReplicas();
    vendor.reset();
    // The load balancer's view: requests go round-robin to the APIs in rotation.
    const rotation: ApiProc[] = [...cluster.apis];
    let rr = 0;
    let running = true;
    let ok = 0;
    const failures: string[] = [];
    const client = async (i: number) => {
      while (running) {
        const api = rotation[rr++ % rotation.length]!;
        const stream = i % 2 === 1;
        try {
          const res = await fetch(`${api.url}/api/gateway/openai/v1/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${virtualKey}` },
            body: JSON.stringify({
              model: 'gpt-4o-mini',
              messages: [{ role: 'user', content: `hi ${i}` }],
              ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
            }),
          });
          const text = await res.text();
          const whole = stream
            ? res.status === 200 && text.includes('data: [DONE]')
            : res.status === 200 && Boolean((JSON.parse(text) as { id?: string }).id);
          if (whole) ok++;
          else failures.push(`${api.name}: ${res.status} ${text.slice(0, 200)}`);
        } catch (err) {
          failures.push(`${api.name}: ${String((err as Error).cause ?? err)}`);
        }
      }
    };
    const clients = Array.from({ length: 4 }, (_, i) => client(i));
    const exits: string[] = [];
    try {
      await sleep(1_000);
      for (const old of [...cluster.apis]) {
        // Out of rotation first (as an endpoint leaves a Service), then SIGTERM: in-flight calls drain.
        rotation.splice(rotation.indexOf(old), 1);
        await sleep(300);
        const exit = await cluster.terminate(old);
        exits.push(`${old.name} exit ${exit.code ?? exit.signal}`);
        const fresh = await cluster.spawnApi();
        cluster.apis[cluster.apis.indexOf(old)] = fresh;
        rotation.push(fresh);
        await sleep(1_000);
      }
    } finally {
      running = false;
      await Promise.all(clients);
    }
    console.log(
      `[replicas] rolling restart of both APIs: ${ok} gateway requests answered, ${failures.length} failed (${exits.join(', ')})`,
    );
    if (failures.length) console.log(`[replicas] failures:\n  ${failures.slice(0, 20).join('\n  ')}`);
    expect(ok).toBeGreaterThan(20);
    expect(failures).toEqual([]);
    expect(exits.every((e) => e.endsWith('exit 0'))).toBe(true);
  }, 240_000);

  it(
    'restart of PostgreSQL mid-turn: turns are delayed, none fails',
    () => serviceRestart('pg-restart', 'PostgreSQL restart', () => cluster.restartPg(1_000)),
    240_000,
  );

  it('kill -9 of an API in the middle of gateway traffic: every answered call has its usage row and budget charge', async () => {
    await ensureReplicas();
    vendor.reset();
    const api = cluster.apis[0]!.url;
    const key = await call(api, 'POST', '/api/agent-server/virtual-keys', {
      name: 'replicas-budget',
      providers: [{ provider_id: providerId, model_names: ['*'] }],
      budget: { max_usd: 1000, period: 'day' },
    });
    const rotation: ApiProc[] = [...cluster.apis];
    const victim = rotation[0]!;
    let rr = 0;
    let running = true;
    let calls = 0;
    /** Trace ids of the calls whose whole answer arrived. */
    const answered: string[] = [];
    const client = async (i: number) => {
      while (running) {
        const target = rotation[rr++ % rotation.length]!;
        const stream = i % 2 === 1;
        calls++;
        try {
          const res = await fetch(`${target.url}/api/gateway/openai/v1/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${key.secret_key}` },
            body: JSON.stringify({
              model: 'vendor/gpt-test',
              max_tokens: 100,
              messages: [{ role: 'user', content: `hi ${i}` }],
              ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
            }),
          });
          const text = await res.text();
          const whole = stream
            ? res.status === 200 && text.includes('data: [DONE]')
            : res.status === 200 && Boolean((JSON.parse(text) as { id?: string }).id);
          if (whole) answered.push(res.headers.get('x-trace-id')!);
        } catch {
          // cut by the kill
        }
      }
    };
    const clients = Array.from({ length: 8 }, (_, i) => client(i));
    await sleep(1_500);
    await killHard(victim);
    rotation.splice(rotation.indexOf(victim), 1);
    await sleep(1_000);
    running = false;
    await Promise.all(clients);
    // The victim's last calls are charged when its budget lease comes back: once the lease has
    // expired (GATEWAY_LEASE_TTL_MS, 10 s by default), the next lease a survivor takes returns it,
    // charging those calls from their usage rows (some stored provisionally at their worst case).
    await sleep(10_500);
    const after = await fetch(`${rotation[0]!.url}/api/gateway/openai/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key.secret_key}` },
      body: JSON.stringify({
        model: 'vendor/gpt-test',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
    await after.text();
    expect(after.status).toBe(200);
    // That call's own cost (once its row is complete) is left out of what the ledger charged.
    const afterRow = async () =>
      cluster
        .db('gateway_usage')
        .where({ trace_id: after.headers.get('x-trace-id')!, provisional: false })
        .first<{ cost_usd: string } | undefined>('cost_usd');
    let afterCost = await afterRow();
    for (
      const deadline = Date.now() + 10_000;
      !afterCost && Date.now() < deadline;
      afterCost = await afterRow()
    )
      await sleep(50);
    expect(afterCost).toBeDefined();

    const rows: Array<{ trace_id: string; cost_usd: string }> = await cluster
      .db('gateway_usage')
      .whereIn('trace_id', answered)
      .select('trace_id', 'cost_usd');
    const stored = new Set(rows.map((r) => r.trace_id));
    const lost = answered.filter((t) => !stored.has(t));
    const answeredCost = rows.reduce((sum, r) => sum + Number(r.cost_usd), 0);
    const perCall = rows.length ? answeredCost / rows.length : 0;
    // The survivor writes its counters in batches: give it a moment.
    const charged = async () => {
      const ledger: Array<{ spent_usd: string }> = await cluster
        .db('gateway_budget_ledger')
        .where({ virtual_key_id: key.id })
        .select('spent_usd');
      return ledger.reduce((sum, r) => sum + Number(r.spent_usd), 0) - Number(afterCost!.cost_usd);
    };
    let spent = await charged();
    for (const deadline = Date.now() + 10_000; spent < answeredCost - 1e-9 && Date.now() < deadline;) {
      await sleep(250);
      spent = await charged();
    }
    const uncharged = perCall ? Math.max(0, Math.round((answeredCost - spent) / perCall)) : 0;
    console.log(
      `[replicas] kill -9 API in gateway traffic: ${calls} calls, ${answered.length} answered, ` +
        `usage rows lost ${lost.length}, budget charges lost ${uncharged} ` +
        `(answered ${answeredCost.toFixed(6)} USD, charged ${spent.toFixed(6)} USD)`,
    );
    expect(answered.length).toBeGreaterThan(20);
    expect(lost).toEqual([]);
    expect(uncharged).toBe(0);
  }, 240_000);
});
