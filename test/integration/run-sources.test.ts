/**
 * Every run records where it came from: converse is `rest`, the Agent
 * Protocol `langgraph`. Run lists filter by source, and GET /runs/statistics
 * counts a project's runs by source, status or agent (with their tokens, cost
 * and median duration). Real Temporal and PostgreSQL, a scripted vendor.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createProject } from '../helpers/factories.js';
import { noTemporal } from '../helpers/services.js';
import { useSessionWorld } from './sessions/session-harness.js';

const API = '/api/agent-server';

interface SourcedRun {
  run_id: string;
  source: string;
  status: string;
  agent_id: string;
}
interface StatRow {
  source?: string;
  status?: string;
  agent_id?: string;
  runs: number;
  completed: number;
  failed: number;
  cancelled: number;
  input_tokens: number;
  output_tokens: number;
  p50_duration_ms: number | null;
}

describe.skipIf(noTemporal())('run sources', () => {
  const world = useSessionWorld();
  const get = <T>(path: string) => world.fx.api.request<T>('GET', `${API}${path}`);
  let agentId: string;
  let restRuns: SourcedRun[] = [];

  beforeAll(async () => {
    const { fx } = world;
    agentId = (await fx.agent()).id;
    fx.vendor.script({ reply: { text: 'one', usage: { input: 100, output: 10 } } });
    const first = await fx.converse({ agent_id: agentId, message: 'hi' });
    fx.vendor.script({ error: { status: 400, message: 'the scripted model refuses' } });
    const second = await fx.converse({ agent_id: agentId, message: 'again' });
    restRuns = [first.body.data, second.body.data] as unknown as SourcedRun[];
    // One run through the Agent Protocol (a stateless wait).
    fx.vendor.script({ reply: { text: 'from langgraph', usage: { input: 7, output: 3 } } });
    const res = await fetch(`${fx.api.url}/api/langgraph/${fx.projectId}/runs/wait`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        assistant_id: agentId,
        input: { messages: [{ role: 'user', content: 'hello' }] },
      }),
    });
    expect(res.status).toBe(200);
  });

  it('a converse run is `rest`, an Agent Protocol run `langgraph`; lists filter by source', async () => {
    const { projectId } = world.fx;
    expect(restRuns.map((r) => [r.source, r.status])).toEqual([
      ['rest', 'completed'],
      ['rest', 'failed'],
    ]);
    const all = await get<SourcedRun[]>(`/runs?project_id=${projectId}`);
    expect(all.body.data.map((r) => r.source).sort()).toEqual(['langgraph', 'rest', 'rest']);
    const langgraph = await get<SourcedRun[]>(`/runs?project_id=${projectId}&source=langgraph`);
    expect(langgraph.body.data.map((r) => [r.source, r.status])).toEqual([['langgraph', 'completed']]);
    const both = await get<SourcedRun[]>(`/agents/${agentId}/runs?source=rest,langgraph`);
    expect(both.body.data).toHaveLength(3);
    const none = await get<SourcedRun[]>(`/runs?project_id=${projectId}&source=mcp&source=a2a`);
    expect(none.body.data).toEqual([]);

    const bad = await get(`/runs?project_id=${projectId}&source=smtp`);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/source must be one or more of rest, langgraph, mcp, a2a, cron/);
  });

  it('statistics count runs by source (the default), by status and by agent', async () => {
    const { projectId } = world.fx;
    const bySource = await get<StatRow[]>(`/runs/statistics?project_id=${projectId}`);
    expect(bySource.status).toBe(200);
    expect(bySource.body.data).toEqual([
      expect.objectContaining({ source: 'rest', runs: 2, completed: 1, failed: 1, cancelled: 0 }),
      expect.objectContaining({
        source: 'langgraph',
        runs: 1,
        completed: 1,
        input_tokens: 7,
        output_tokens: 3,
      }),
    ]);
    const rest = bySource.body.data[0]!;
    expect(rest.input_tokens).toBe(100);
    expect(rest.p50_duration_ms).toBeGreaterThanOrEqual(0);

    const byStatus = await get<StatRow[]>(`/runs/statistics?project_id=${projectId}&group_by=status`);
    expect(byStatus.body.data.map((r) => [r.status, r.runs])).toEqual([
      ['completed', 2],
      ['failed', 1],
    ]);
    const byAgent = await get<StatRow[]>(
      `/runs/statistics?project_id=${projectId}&group_by=agent&source=langgraph`,
    );
    expect(byAgent.body.data.map((r) => [r.agent_id, r.runs])).toEqual([[agentId, 1]]);
    const future = await get<StatRow[]>(
      `/runs/statistics?project_id=${projectId}&start_time=2999-01-01T00:00:00Z`,
    );
    expect(future.body.data).toEqual([]);
  });

  it('statistics refuse bad input naming the field, and an unknown project is a 404', async () => {
    const { projectId } = world.fx;
    const cases: Array<[string, string]> = [
      ['group_by=door', 'group_by'],
      ['source=smtp', 'source'],
      ['start_time=2026-02-01T00:00:00Z&end_time=2026-01-01T00:00:00Z', 'start_time'],
    ];
    for (const [query, field] of cases) {
      const res = await get(`/runs/statistics?project_id=${projectId}&${query}`);
      expect(res.status, query).toBe(400);
      expect(JSON.stringify(res.body), query).toContain(`"field":"${field}"`);
    }
    expect((await get('/runs/statistics')).status).toBe(400);
    const other = await createProject(world.fx.api);
    expect((await get<StatRow[]>(`/runs/statistics?project_id=${other.id}`)).body.data).toEqual([]);
    const unknown = await get('/runs/statistics?project_id=00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
  });
});
