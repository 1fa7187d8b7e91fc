/**
 * The Agent Protocol's assistants through the official client
 * (`@langchain/langgraph-sdk`'s `client.assistants`), against the real API and
 * PostgreSQL: every agent is an assistant of its own graph; creating an
 * assistant copies an agent; updates are versions of the agent (listed,
 * put back in force); search, count, graph, schemas, delete; bad input is a
 * 422 and an unknown assistant a 404, both as `{detail}`.
 */
import { Client, type Assistant } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { createModel, createProvider } from '../../helpers/factories/config.js';
import { createPrompt } from '../../helpers/factories/content.js';
import { createProject, uniqueName } from '../../helpers/factories.js';

const AGENTS = '/api/agent-server/agents';

interface Refusal {
  status: number;
  body: { detail: unknown };
}

/** The client's error for a refused call: its status and the `{detail}` body. */
async function refusal(call: Promise<unknown>): Promise<Refusal> {
  const err = (await call.then(
    () => undefined,
    (e: unknown) => e,
  )) as { status: number; text: string } | undefined;
  if (!err) throw new Error('the call succeeded');
  return { status: err.status, body: JSON.parse(err.text) as { detail: unknown } };
}

type DetailItem = { loc: string[]; msg: string };
const fieldsOf = (r: Refusal) => (r.body.detail as DetailItem[]).map((d) => d.loc.join('.'));

describe('Agent Protocol assistants', () => {
  let api: TestApi;
  let projectId: string;
  let client: Client;
  /** Each project's model and prompt, for its agents. */
  const parts = new Map<string, { modelId: string; promptId: string }>();

  const clientOf = (id: string) =>
    new Client({ apiUrl: `${api.url}/api/langgraph/${id}`, callerOptions: { maxRetries: 0 } });

  /** An agent made through our API: a graph of its own. */
  async function agent(
    fields: Record<string, unknown> = {},
    project = projectId,
  ): Promise<{ id: string; name: string }> {
    const { modelId, promptId } = parts.get(project)!;
    const res = await api.request<{ id: string; name: string }>('POST', `${AGENTS}?project_id=${project}`, {
      name: uniqueName('graph'),
      model_id: modelId,
      prompt_id: promptId,
      max_iterations: 9,
      ...fields,
    });
    expect(res.status, res.text).toBe(200);
    return res.body.data;
  }

  /** A project with a model and a prompt for its agents. */
  async function project(): Promise<string> {
    const id = (await createProject(api)).id;
    const provider = await createProvider(api);
    const modelId = (await createModel(api, id, { provider_id: provider.id })).id;
    parts.set(id, { modelId, promptId: (await createPrompt(api, id)).id });
    return id;
  }

  beforeAll(async () => {
    api = await startTestApi();
    projectId = await project();
    client = clientOf(projectId);
  });
  afterAll(async () => {
    await api?.close();
  });

  it('shows every agent as an assistant of its own graph, by id or by name', async () => {
    const graph = await agent({ description: 'the support agent' });
    const byId = await client.assistants.get(graph.id);
    expect(byId).toMatchObject({
      assistant_id: graph.id,
      graph_id: graph.id,
      name: graph.name,
      description: 'the support agent',
      config: {},
      context: {},
      metadata: {},
      version: 1,
    });
    expect(Date.parse(byId.created_at)).not.toBeNaN();
    expect(Date.parse(byId.updated_at)).not.toBeNaN();
    expect(await client.assistants.get(graph.name)).toEqual(byId);
  });

  it("creates an assistant as a copy of its graph's agent (skills included), with its own config, context, metadata and name", async () => {
    const graph = await agent();
    const skill = await api.request('PUT', `${AGENTS}/${graph.id}/skills/csv`, {
      files: {
        'SKILL.md': '---\nname: csv\ndescription: Reads CSV files\n---\n# CSV\n',
        'run.sh': 'echo hi\n',
      },
    });
    expect(skill.status, skill.text).toBe(200);
    const created = await client.assistants.create({
      graphId: graph.id,
      name: uniqueName('assistant'),
      description: 'a copy',
      config: { configurable: { tone: 'dry' }, recursion_limit: 5 },
      context: { role: 'a pirate' },
      metadata: { team: 'blue' },
    });
    expect(created).toMatchObject({
      graph_id: graph.id,
      description: 'a copy',
      config: { configurable: { tone: 'dry' }, recursion_limit: 5 },
      context: { role: 'a pirate' },
      metadata: { team: 'blue' },
      version: 1,
    });
    expect(created.assistant_id).not.toBe(graph.id);
    // It is an agent of our API too, with the graph's settings.
    const copy = await api.request<Record<string, unknown>>('GET', `${AGENTS}/${created.assistant_id}`);
    expect(copy.body.data).toMatchObject({
      model_id: parts.get(projectId)!.modelId,
      prompt_id: parts.get(projectId)!.promptId,
      max_iterations: 9,
      graph_id: graph.id,
      context: { role: 'a pirate' },
    });

    const skills = await api.request<Array<{ name: string; file_count: number }>>(
      'GET',
      `${AGENTS}/${created.assistant_id}/skills`,
    );
    expect(skills.body.data.map((k) => [k.name, k.file_count])).toEqual([['csv', 2]]);

    // By the graph's name, with the default name: the graph's, with a suffix.
    const named = await client.assistants.create({ graphId: graph.name });
    expect(named.graph_id).toBe(graph.id);
    expect(named.name.startsWith(`${graph.name} `)).toBe(true);
    expect(named.name).not.toBe(graph.name);
  });

  it('takes an assistant_id of the caller, and answers a second create 409 or, with do_nothing, the existing one', async () => {
    const graph = await agent();
    const assistantId = crypto.randomUUID();
    const first = await client.assistants.create({ graphId: graph.id, assistantId, name: uniqueName('a') });
    expect(first.assistant_id).toBe(assistantId);
    const again = await refusal(client.assistants.create({ graphId: graph.id, assistantId }));
    expect(again).toEqual({ status: 409, body: { detail: 'Assistant already exists' } });
    const kept = await client.assistants.create({ graphId: graph.id, assistantId, ifExists: 'do_nothing' });
    expect(kept).toEqual(first);
    // A name taken in the project is a 409 too.
    const taken = await refusal(client.assistants.create({ graphId: graph.id, name: first.name }));
    expect(taken.status).toBe(409);
  });

  it('makes a version of every update (metadata merged), lists them, and puts one back in force', async () => {
    const graph = await agent();
    const a = await client.assistants.create({
      graphId: graph.id,
      metadata: { team: 'blue' },
      config: { tags: ['a'] },
    });
    const updated = await client.assistants.update(a.assistant_id, {
      metadata: { stage: 'beta' },
      config: { tags: ['b'] },
      name: uniqueName('renamed'),
    });
    expect(updated).toMatchObject({
      version: 2,
      metadata: { team: 'blue', stage: 'beta' },
      config: { tags: ['b'] },
    });
    const third = await client.assistants.update(a.assistant_id, { context: { role: 'a parrot' } });
    expect(third).toMatchObject({ version: 3, context: { role: 'a parrot' }, name: updated.name });

    const versions = await client.assistants.getVersions(a.assistant_id);
    expect(versions.map((v) => v.version)).toEqual([3, 2, 1]);
    expect(versions[2]).toMatchObject({
      assistant_id: a.assistant_id,
      graph_id: graph.id,
      name: a.name,
      metadata: { team: 'blue' },
      config: { tags: ['a'] },
    });
    const paged = await client.assistants.getVersions(a.assistant_id, { limit: 1, offset: 1 });
    expect(paged.map((v) => v.version)).toEqual([2]);
    const byMetadata = await client.assistants.getVersions(a.assistant_id, { metadata: { stage: 'beta' } });
    expect(byMetadata.map((v) => v.version)).toEqual([3, 2]);

    const back = await client.assistants.setLatest(a.assistant_id, 1);
    expect(back).toMatchObject({
      version: 1,
      name: a.name,
      metadata: { team: 'blue' },
      config: { tags: ['a'] },
    });
    expect((await client.assistants.get(a.assistant_id)).version).toBe(1);
    // Our API sees the same agent at the same version.
    const seen = await api.request<{ version: number }>('GET', `${AGENTS}/${a.assistant_id}`);
    expect(seen.body.data.version).toBe(1);
    // The next update is a new version after the highest.
    expect((await client.assistants.update(a.assistant_id, { description: 'next' })).version).toBe(4);

    const missing = await refusal(client.assistants.setLatest(a.assistant_id, 99));
    expect(missing).toEqual({ status: 404, body: { detail: 'Assistant version not found' } });
  });

  it("moves an assistant to another graph: it takes that agent's settings and keeps its own", async () => {
    const first = await agent();
    const second = await agent({ max_iterations: 3, description: 'second graph' });
    const a = await client.assistants.create({ graphId: first.id, context: { role: 'a cook' } });
    const moved = await client.assistants.update(a.assistant_id, { graphId: second.name });
    expect(moved).toMatchObject({
      graph_id: second.id,
      version: 2,
      name: a.name,
      context: { role: 'a cook' },
    });
    const seen = await api.request<Record<string, unknown>>('GET', `${AGENTS}/${a.assistant_id}`);
    expect(seen.body.data).toMatchObject({ max_iterations: 3, graph_id: second.id });
    // Its own graph again: graph_id is its own id.
    const home = await client.assistants.update(a.assistant_id, { graphId: a.assistant_id });
    expect(home.graph_id).toBe(a.assistant_id);
    const unknown = await refusal(client.assistants.update(a.assistant_id, { graphId: 'no-such-graph' }));
    expect(unknown.status).toBe(404);
  });

  it('searches by graph, metadata, name; pages and sorts; counts the same', async () => {
    // A project of this test's own: the counts are of its agents only.
    const own = await project();
    const c = clientOf(own);
    const graph = await agent({ name: 'alpha-graph' }, own);
    const b = await c.assistants.create({
      graphId: graph.id,
      name: 'beta',
      metadata: { env: 'prod', tier: 1 },
    });
    const g = await c.assistants.create({ graphId: graph.id, name: 'gamma', metadata: { env: 'dev' } });
    const other = await agent({ name: 'other-graph' }, own);

    const ofGraph = await c.assistants.search({ graphId: graph.id, sortBy: 'name', sortOrder: 'asc' });
    expect(ofGraph.map((x) => x.name)).toEqual(['alpha-graph', 'beta', 'gamma']);
    expect((await c.assistants.search({ graphId: 'alpha-graph' })).length).toBe(3);
    expect(await c.assistants.search({ graphId: 'no-such-graph' })).toEqual([]);

    const byGraph = await c.assistants.search({ sortBy: 'graph_id', sortOrder: 'asc' });
    const graphs = byGraph.map((x) => x.graph_id);
    expect(graphs).toEqual([...graphs].sort());
    expect(graphs).toHaveLength(4);

    const prod = await c.assistants.search({ metadata: { env: 'prod' } });
    expect(prod.map((x) => x.assistant_id)).toEqual([b.assistant_id]);
    const byName = await c.assistants.search({ name: 'AMM' });
    expect(byName.map((x) => x.assistant_id)).toEqual([g.assistant_id]);

    const all = await c.assistants.search({ sortBy: 'created_at', sortOrder: 'desc' });
    expect(all.map((x) => x.assistant_id)).toEqual([other.id, g.assistant_id, b.assistant_id, graph.id]);
    const page = await c.assistants.search({ limit: 2, offset: 1, includePagination: true });
    expect(page.assistants.map((x) => x.assistant_id)).toEqual([g.assistant_id, b.assistant_id]);
    expect(page.next).toBe('3');
    const last = await c.assistants.search({ limit: 2, offset: 2, includePagination: true });
    expect(last.next).toBeNull();
    const slim = await c.assistants.search({ limit: 1, select: ['assistant_id', 'name'] });
    expect(slim).toEqual([{ assistant_id: other.id, name: 'other-graph' }]);

    expect(await c.assistants.count()).toBe(4);
    expect(await c.assistants.count({ graphId: graph.id })).toBe(3);
    expect(await c.assistants.count({ metadata: { env: 'dev' } })).toBe(1);
    expect(await c.assistants.count({ name: 'graph' })).toBe(2);
  });

  it("answers the assistant's graph, schemas and subgraphs", async () => {
    const graph = await agent({ context: { role: 'a guide' } });
    const drawn = await client.assistants.getGraph(graph.id);
    expect(drawn.nodes.map((n) => n.id)).toEqual(['__start__', 'agent', 'tools', '__end__']);
    expect(drawn.edges).toContainEqual({ source: '__start__', target: 'agent' });
    expect(drawn.edges).toContainEqual({ source: 'tools', target: 'agent' });
    expect(drawn.edges.filter((e) => e.source === 'agent').map((e) => e.target)).toEqual([
      'tools',
      '__end__',
    ]);
    expect(await client.assistants.getGraph(graph.id, { xray: true })).toEqual(drawn);

    const schemas = await client.assistants.getSchemas(graph.id);
    expect(schemas.graph_id).toBe(graph.id);
    for (const s of [schemas.input_schema, schemas.output_schema, schemas.state_schema])
      expect(s).toMatchObject({ type: 'object', properties: { messages: { type: 'array' } } });
    expect(schemas.config_schema).toMatchObject({ type: 'object' });
    expect(schemas.context_schema).toMatchObject({ type: 'object', properties: { role: {} } });

    expect(await client.assistants.getSubgraphs(graph.id)).toEqual({});
    expect(await client.assistants.getSubgraphs(graph.id, { namespace: 'tools', recurse: true })).toEqual({});
  });

  it('deletes an assistant (its agent): then it is not found', async () => {
    const graph = await agent();
    const a = await client.assistants.create({ graphId: graph.id });
    expect(await client.assistants.delete(a.assistant_id)).toBeUndefined();
    const gone = await refusal(client.assistants.get(a.assistant_id));
    expect(gone).toEqual({ status: 404, body: { detail: 'Assistant not found' } });
    expect((await api.request('GET', `${AGENTS}/${a.assistant_id}`)).status).toBe(404);
    // The graph it was copied from is still there.
    expect((await client.assistants.get(graph.id)).assistant_id).toBe(graph.id);
    const again = await refusal(client.assistants.delete(a.assistant_id));
    expect(again.status).toBe(404);
    // Deleting its threads with it is refused (422) rather than ignored; the assistant stays.
    const withThreads = await refusal(client.assistants.delete(graph.id, { deleteThreads: true }));
    expect(withThreads.status).toBe(422);
    expect(withThreads.body.detail).toMatch(/delete_threads/);
    expect((await client.assistants.get(graph.id)).assistant_id).toBe(graph.id);
  });

  it('answers bad input 422 naming the field, and unknown assistants, graphs and projects 404, as {detail}', async () => {
    const graph = await agent();
    const noGraph = await refusal(client.assistants.create({} as unknown as { graphId: string }));
    expect(noGraph.status).toBe(422);
    expect(fieldsOf(noGraph)).toContain('body.graph_id');

    const badMetadata = await refusal(
      client.assistants.create({ graphId: graph.id, metadata: 'x' as unknown as Record<string, unknown> }),
    );
    expect(badMetadata.status).toBe(422);
    expect(fieldsOf(badMetadata)).toContain('body.metadata');

    const badLimit = await refusal(client.assistants.search({ limit: 0 }));
    expect(badLimit.status).toBe(422);
    expect(fieldsOf(badLimit)).toContain('body.limit');

    const badVersion = await refusal(client.assistants.setLatest(graph.id, 'one' as unknown as number));
    expect(badVersion.status).toBe(422);
    expect(fieldsOf(badVersion)).toContain('body.version');

    const unknown = crypto.randomUUID();
    for (const call of [
      () => client.assistants.get(unknown),
      () => client.assistants.get('no-such-agent'),
      () => client.assistants.update(unknown, { name: 'x' }),
      () => client.assistants.getGraph(unknown),
      () => client.assistants.getSchemas(unknown),
      () => client.assistants.getVersions(unknown),
      () => client.assistants.setLatest(unknown, 1),
      () => client.assistants.delete(unknown),
    ])
      expect(await refusal(call())).toEqual({ status: 404, body: { detail: 'Assistant not found' } });

    const noSource = await refusal(client.assistants.create({ graphId: 'no-such-graph' }));
    expect(noSource.status).toBe(404);
    expect(noSource.body.detail).toMatch(/Graph "no-such-graph" not found/);

    // Another project's agent is not this project's assistant.
    const elsewhere = clientOf(await project());
    expect((await refusal(elsewhere.assistants.get(graph.id))).status).toBe(404);
    const noProject = await refusal(clientOf(crypto.randomUUID()).assistants.get(graph.id));
    expect(noProject).toEqual({ status: 404, body: { detail: 'Project not found' } });
  });
});

export type { Assistant };
