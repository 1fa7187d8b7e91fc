import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../core/db/knex.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProject, uniqueName } from '../helpers/factories.js';
import { createModel, createProvider, createVirtualKey } from '../helpers/factories/config.js';
import { createPrompt } from '../helpers/factories/content.js';
import { databaseUrl } from '../helpers/services.js';

const A = '/api/agent-server/agents';

interface AgentData {
  id: string;
  project_id: string;
  name: string;
  model_id: string;
  prompt_id: string;
  prompt_label: string;
  schema_id: string | null;
  enable_history: boolean;
  summarizer_type: string;
  sliding_window_keep_count: number | null;
  llm_summarizer_token_threshold: number | null;
  mcp_servers: Array<{ mcp_server_id: string; tool_filters: string[]; tools_requiring_approval: string[] }>;
  sandbox: { enabled: boolean; docker_image: string | null; require_approval: boolean };
  max_iterations: number;
  warnings: string[];
  created_at: string;
  updated_at: string;
}

interface World {
  projectId: string;
  modelId: string;
  promptId: string;
  productionlessPromptId: string;
  schemaId: string;
  mcpId: string;
}

/** The resources an agent refers to, written straight to the tables so this test exercises agents alone. */
async function world(api: TestApi, db: Db): Promise<World> {
  const project = await createProject(api);
  const insert = async (table: string, row: Record<string, unknown>): Promise<string> => {
    const rows: Array<{ id: string }> = await db(table).insert(row).returning('id');
    return rows[0]!.id;
  };
  const prompt = async (labels: string[]) => {
    const promptId = await insert('prompts', { project_id: project.id, name: uniqueName('prompt') });
    const versionId = await insert('prompt_versions', {
      prompt_id: promptId,
      version: 1,
      template: 'You are {{role}}.',
      commit_message: 'first',
    });
    for (const label of labels)
      await db('prompt_labels').insert({ prompt_id: promptId, label, version_id: versionId });
    return promptId;
  };
  return {
    projectId: project.id,
    modelId: await insert('models', {
      project_id: project.id,
      name: uniqueName('model'),
      model_id: 'gpt-4o-mini',
      provider_type: 'openai',
      provider_id: (await createProvider(api)).id,
    }),
    promptId: await prompt(['latest', 'production']),
    productionlessPromptId: await prompt(['latest']),
    schemaId: await insert('schemas', {
      project_id: project.id,
      name: uniqueName('schema'),
      schema: JSON.stringify({ type: 'object' }),
    }),
    mcpId: await insert('mcp_servers', {
      project_id: project.id,
      name: uniqueName('mcp'),
      endpoint: 'http://127.0.0.1:9/mcp',
    }),
  };
}

describe('Agents API', () => {
  let api: TestApi;
  let db: Db;
  beforeAll(async () => {
    api = await startTestApi();
    db = createDb(databaseUrl());
  });
  afterAll(async () => {
    await api.close();
    await db.destroy();
  });

  it('creates an agent with the documented request and documented defaults, and reads it back by id and by name', async () => {
    const w = await world(api, db);
    const name = uniqueName('agent');
    const res = await api.request<AgentData>('POST', `${A}?project_id=${w.projectId}`, {
      name,
      model_id: w.modelId,
      prompt_id: w.promptId,
    });
    expect(res.status).toBe(200);
    const agent = res.body.data;
    expect(agent).toMatchObject({
      project_id: w.projectId,
      name,
      model_id: w.modelId,
      prompt_id: w.promptId,
      prompt_label: 'latest',
      schema_id: null,
      enable_history: true,
      summarizer_type: 'none',
      max_iterations: 20,
      mcp_servers: [],
      sandbox: { enabled: false, docker_image: null, require_approval: false },
      // The one thing its turns do not get by themselves: a value for {{role}}.
      warnings: [expect.stringMatching(/^prompt_id: the prompt's latest version \(v1\) uses \{\{role\}\}/)],
    });
    expect((await api.request<AgentData>('GET', `${A}/${agent.id}`)).body.data).toEqual(agent);
    expect((await api.request<AgentData>('GET', `${A}/by-name?name=${name}`)).body.data.id).toBe(agent.id);
    expect(
      (await api.request<AgentData[]>('GET', `${A}?project_id=${w.projectId}`)).body.data.map((a) => a.id),
    ).toEqual([agent.id]);
  });

  it('stores every optional field, MCP servers with filters, and updates partially', async () => {
    const w = await world(api, db);
    const body = {
      name: uniqueName('full'),
      description: 'does everything',
      model_id: w.modelId,
      prompt_id: w.promptId,
      prompt_label: 'production',
      schema_id: w.schemaId,
      enable_history: true,
      summarizer_type: 'llm',
      llm_summarizer_token_threshold: 4000,
      llm_summarizer_keep_recent_count: 4,
      llm_summarizer_prompt_id: w.promptId,
      llm_summarizer_prompt_label: 'production',
      llm_summarizer_model_id: w.modelId,
      mcp_servers: [
        { mcp_server_id: w.mcpId, tool_filters: ['echo', 'add'], tools_requiring_approval: ['add'] },
      ],
      sandbox: { enabled: true, docker_image: 'agent-sandbox:0.1.0', require_approval: true },
      max_iterations: 7,
      approval_timeout_ms: 60_000,
    };
    const created = await api.request<AgentData>('POST', `${A}?project_id=${w.projectId}`, body);
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject(body);
    // SANDBOX_ENABLED is unset on this server: the agent is valid but told it will get no sandbox.
    expect(created.body.data.warnings.join(' ')).toMatch(/SANDBOX_ENABLED/);

    const patched = await api.request<AgentData>('PATCH', `${A}/${created.body.data.id}`, {
      summarizer_type: 'sliding_window',
      sliding_window_keep_count: 3,
      mcp_servers: [],
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({
      summarizer_type: 'sliding_window',
      sliding_window_keep_count: 3,
      mcp_servers: [],
      max_iterations: 7,
      schema_id: w.schemaId,
    });
  });

  it('rejects bad input with 400 naming each field, and writes nothing', async () => {
    const w = await world(api, db);
    const base = { name: uniqueName('bad'), model_id: w.modelId, prompt_id: w.promptId };
    const cases: Array<[Record<string, unknown>, string[]]> = [
      [{ ...base, prompt_label: 'staging' }, ['prompt_label']],
      [{ ...base, summarizer_type: 'magic' }, ['summarizer_type']],
      [
        { ...base, summarizer_type: 'llm' },
        ['llm_summarizer_token_threshold', 'llm_summarizer_keep_recent_count', 'llm_summarizer_prompt_id'],
      ],
      [
        {
          ...base,
          summarizer_type: 'llm',
          llm_summarizer_token_threshold: 0,
          llm_summarizer_keep_recent_count: 1,
          llm_summarizer_prompt_id: w.promptId,
        },
        ['llm_summarizer_token_threshold'],
      ],
      [{ ...base, summarizer_type: 'sliding_window' }, ['sliding_window_keep_count']],
      [{ ...base, max_iterations: 0 }, ['max_iterations']],
      [{ ...base, max_iterations: 101 }, ['max_iterations']],
      [{ ...base, model_id: randomUUID() }, ['model_id']],
      [{ ...base, prompt_id: w.productionlessPromptId, prompt_label: 'production' }, ['prompt_label']],
      [{ ...base, schema_id: randomUUID() }, ['schema_id']],
      [{ ...base, mcp_servers: [{ mcp_server_id: randomUUID() }] }, ['mcp_servers.0.mcp_server_id']],
      [{ ...base, mcp_servers: [{ mcp_server_id: w.mcpId }, { mcp_server_id: w.mcpId }] }, ['mcp_servers.1']],
      [{ ...base, sandbox: { enabled: 'yes' } }, ['sandbox.enabled']],
      [{ ...base, sandbox: { enabled: true, docker_image: 'Not An Image!' } }, ['sandbox.docker_image']],
      [{ ...base, colour: 'red' }, ['colour']],
      [{ ...base, name: 'x'.repeat(201) }, ['name']],
      [{ name: 'missing-ids' }, ['model_id', 'prompt_id']],
    ];
    for (const [body, fields] of cases) {
      const res = await api.request('POST', `${A}?project_id=${w.projectId}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toMatchObject({ error: true, message: 'Invalid request', status: 400, data: {} });
      expect(res.body.errorDetails.fields?.map((f) => f.field)).toEqual(expect.arrayContaining(fields));
    }
    expect((await api.request<AgentData[]>('GET', `${A}?project_id=${w.projectId}`)).body.data).toEqual([]);
  });

  it('refuses each out-of-range number with its bound in the message, on create and update, and keeps in-range values as sent', async () => {
    const w = await world(api, db);
    const base = { name: uniqueName('bounds'), model_id: w.modelId, prompt_id: w.promptId };
    // The longest timeout the integer column holds in whole days; a month once passed validation and failed in Postgres.
    const longest = 24 * 24 * 3600 * 1000;
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ max_iterations: 500 }, 'max_iterations', 'max_iterations must be at most 100'],
      [{ max_iterations: 0 }, 'max_iterations', 'max_iterations must be at least 1'],
      [{ approval_timeout_ms: -5 }, 'approval_timeout_ms', 'approval_timeout_ms must be at least 1000'],
      [
        { approval_timeout_ms: 30 * 24 * 3600 * 1000 },
        'approval_timeout_ms',
        `approval_timeout_ms must be at most ${longest}`,
      ],
      [
        { summarizer_type: 'sliding_window', sliding_window_keep_count: 10_001 },
        'sliding_window_keep_count',
        'sliding_window_keep_count must be at most 10000',
      ],
      [
        {
          summarizer_type: 'llm',
          llm_summarizer_token_threshold: 0,
          llm_summarizer_keep_recent_count: 10_001,
          llm_summarizer_prompt_id: w.promptId,
        },
        'llm_summarizer_token_threshold',
        'llm_summarizer_token_threshold must be at least 1',
      ],
      [
        {
          summarizer_type: 'llm',
          llm_summarizer_token_threshold: 10,
          llm_summarizer_keep_recent_count: 10_001,
          llm_summarizer_prompt_id: w.promptId,
        },
        'llm_summarizer_keep_recent_count',
        'llm_summarizer_keep_recent_count must be at most 10000',
      ],
    ];
    const created = await api.request<AgentData>('POST', `${A}?project_id=${w.projectId}`, base);
    expect(created.status).toBe(200);
    for (const [patch, field, message] of cases) {
      for (const res of [
        await api.request('POST', `${A}?project_id=${w.projectId}`, {
          ...base,
          name: uniqueName('b'),
          ...patch,
        }),
        await api.request('PATCH', `${A}/${created.body.data.id}`, patch),
      ]) {
        expect(res.status, JSON.stringify(patch)).toBe(400);
        expect(res.body.errorDetails.fields).toContainEqual(expect.objectContaining({ field, message }));
      }
    }
    const unchanged = await api.request<AgentData>('GET', `${A}/${created.body.data.id}`);
    expect(unchanged.body.data).toEqual(created.body.data);

    const edges = { max_iterations: 100, approval_timeout_ms: 1000 };
    const atBounds = await api.request<AgentData>('PATCH', `${A}/${created.body.data.id}`, edges);
    expect(atBounds.status).toBe(200);
    expect(atBounds.body.data).toMatchObject(edges);
    const inside = { max_iterations: 1, approval_timeout_ms: longest };
    const again = await api.request<AgentData>('PATCH', `${A}/${created.body.data.id}`, inside);
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject(inside);
  });

  it('refuses references into another project, keeps ids scoped, and 409s on duplicate names', async () => {
    const w = await world(api, db);
    const other = await world(api, db);
    const cross = await api.request('POST', `${A}?project_id=${w.projectId}`, {
      name: uniqueName('x'),
      model_id: other.modelId,
      prompt_id: w.promptId,
    });
    expect(cross.status).toBe(400);
    expect(cross.body.errorDetails.fields?.[0]?.field).toBe('model_id');

    const name = uniqueName('dup');
    const first = await api.request<AgentData>('POST', `${A}?project_id=${w.projectId}`, {
      name,
      model_id: w.modelId,
      prompt_id: w.promptId,
    });
    expect(
      (
        await api.request('POST', `${A}?project_id=${w.projectId}`, {
          name,
          model_id: w.modelId,
          prompt_id: w.promptId,
        })
      ).status,
    ).toBe(409);
    // The same name in another project is fine; by-name then needs project_id.
    expect(
      (
        await api.request('POST', `${A}?project_id=${other.projectId}`, {
          name,
          model_id: other.modelId,
          prompt_id: other.promptId,
        })
      ).status,
    ).toBe(200);
    const ambiguous = await api.request('GET', `${A}/by-name?name=${name}`);
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.errorDetails.fields?.[0]?.field).toBe('project_id');
    expect(
      (await api.request<AgentData>('GET', `${A}/by-name?name=${name}&project_id=${w.projectId}`)).body.data
        .id,
    ).toBe(first.body.data.id);

    expect(
      (await api.request('GET', `${A}/${first.body.data.id}?project_id=${other.projectId}`)).status,
    ).toBe(404);
    expect((await api.request('PATCH', `${A}/${randomUUID()}`, { max_iterations: 3 })).status).toBe(404);
    expect(
      (
        await api.request('POST', `${A}?project_id=${randomUUID()}`, {
          name: 'x',
          model_id: w.modelId,
          prompt_id: w.promptId,
        })
      ).status,
    ).toBe(404);
    const badPatch = await api.request('PATCH', `${A}/${first.body.data.id}`, { summarizer_type: 'llm' });
    expect(badPatch.status).toBe(400);
    expect(
      (await api.request<AgentData>('GET', `${A}/${first.body.data.id}`)).body.data.summarizer_type,
    ).toBe('none');

    expect((await api.request('DELETE', `${A}/${first.body.data.id}`)).body).toMatchObject({
      error: false,
      data: {},
    });
    expect((await api.request('GET', `${A}/${first.body.data.id}`)).status).toBe(404);
  });

  describe('warnings, each naming its field, about what its turns will not get', () => {
    /** A project whose virtual key grants one provider's gpt-4o-mini only, with models on that provider. */
    async function keyedWorld() {
      const project = await createProject(api);
      const provider = await createProvider(api);
      const key = await createVirtualKey(api, {
        providers: [{ provider_id: provider.id, model_names: ['gpt-4o-mini'] }],
      });
      await api.request('PATCH', `/api/agent-server/projects/${project.id}`, { virtual_key_id: key.id });
      const granted = await createModel(api, project.id, {
        provider_id: provider.id,
        model_id: 'gpt-4o-mini',
      });
      const ungranted = await createModel(api, project.id, { provider_id: provider.id, model_id: 'gpt-4o' });
      const plain = await createPrompt(api, project.id, { template: 'Be brief.' });
      return { project, provider, key, granted, ungranted, plain };
    }
    const create = (projectId: string, body: Record<string, unknown>) =>
      api.request<AgentData>('POST', `${A}?project_id=${projectId}`, { name: uniqueName('agent'), ...body });
    const check = (projectId: string, body: Record<string, unknown>) =>
      api.request<{ warnings: Array<{ field: string; message: string }> }>(
        'POST',
        `${A}/check?project_id=${projectId}`,
        body,
      );

    it("a model the project's virtual key does not grant, until the agent uses one it does", async () => {
      const w = await keyedWorld();
      const agent = await create(w.project.id, { model_id: w.ungranted.id, prompt_id: w.plain.id });
      expect(agent.status).toBe(200);
      expect(agent.body.data.warnings).toEqual([
        `model_id: the project's virtual key "${w.key.name}" does not grant ${w.provider.name}/gpt-4o ` +
          `(model "${w.ungranted.name}"): its turns are refused (model_not_granted)`,
      ]);
      expect((await api.request<AgentData>('GET', `${A}/${agent.body.data.id}`)).body.data.warnings).toEqual(
        agent.body.data.warnings,
      );
      const fixed = await api.request<AgentData>('PATCH', `${A}/${agent.body.data.id}`, {
        model_id: w.granted.id,
      });
      expect(fixed.body.data.warnings).toEqual([]);
      // The grant widened to every model: the first model is fine too.
      await api.request('PATCH', `/api/agent-server/virtual-keys/${w.key.id}`, {
        providers: [{ provider_id: w.provider.id, model_names: ['*'] }],
      });
      const listed = await api.request<AgentData[]>('GET', `${A}?project_id=${w.project.id}`);
      expect(listed.body.data.map((a) => a.warnings)).toEqual([[]]);
      expect((await check(w.project.id, { model_id: w.ungranted.id })).body.data.warnings).toEqual([]);
    });

    it('template variables only a conversation can give a value, for the label the agent uses', async () => {
      const w = await keyedWorld();
      const prompt = await createPrompt(api, w.project.id, {
        template: 'Help {{customer}} with order {{ order.id }}; sign as {{customer}}.',
        label: 'production',
      });
      await api.request(
        'POST',
        `/api/agent-server/prompts/${prompt.name}/versions?project_id=${w.project.id}`,
        {
          template: 'No variables here.',
          commit_message: 'plain',
        },
      );
      const onProduction = await create(w.project.id, {
        model_id: w.granted.id,
        prompt_id: prompt.id,
        prompt_label: 'production',
      });
      expect(onProduction.body.data.warnings).toEqual([
        "prompt_id: the prompt's production version (v1) uses {{customer}}, {{order.id}}: only a conversation's " +
          'context gives them a value, and a turn without them renders them empty',
      ]);
      const onLatest = await create(w.project.id, { model_id: w.granted.id, prompt_id: prompt.id });
      expect(onLatest.body.data.warnings).toEqual([]);
    });

    it('a draft is checked without saving: the sandbox, the key, the variables, each with its field', async () => {
      const w = await keyedWorld();
      const prompt = await createPrompt(api, w.project.id, { template: 'Hello {{name}}' });
      const res = await check(w.project.id, {
        model_id: w.ungranted.id,
        prompt_id: prompt.id,
        sandbox: { enabled: true },
      });
      expect(res.status).toBe(200);
      expect(res.body.data.warnings.map((x) => x.field)).toEqual([
        'sandbox.enabled',
        'model_id',
        'prompt_id',
      ]);
      expect(res.body.data.warnings[0]!.message).toMatch(/SANDBOX_ENABLED/);
      expect(res.body.data.warnings[2]!.message).toContain('{{name}}');
      const saved = await create(w.project.id, {
        model_id: w.ungranted.id,
        prompt_id: prompt.id,
        sandbox: { enabled: true },
      });
      expect(saved.body.data.warnings).toEqual(res.body.data.warnings.map((x) => x.message));

      // An empty draft, and ids that name nothing of this project, warn of nothing; bad input is a 400.
      expect((await check(w.project.id, {})).body.data.warnings).toEqual([]);
      const other = await keyedWorld();
      expect((await check(w.project.id, { model_id: other.ungranted.id })).body.data.warnings).toEqual([]);
      const bad = await check(w.project.id, { model_id: 'nope', colour: 'red' });
      expect(bad.status).toBe(400);
      expect(bad.body.errorDetails.fields?.map((f) => f.field).sort()).toEqual(['colour', 'model_id']);
      expect((await api.request('GET', `${A}?project_id=${w.project.id}`)).body.data).toHaveLength(1);
    });

    it('a summarizer model that names no provider while several of its type exist', async () => {
      const w = await keyedWorld();
      await createProvider(api, { provider_type: 'gemini' });
      await createProvider(api, { provider_type: 'gemini' });
      const [unpinned] = await db('models')
        .insert({ project_id: w.project.id, name: uniqueName('m'), model_id: 'g', provider_type: 'gemini' })
        .returning<Array<{ id: string; name: string }>>(['id', 'name']);
      const res = await check(w.project.id, {
        model_id: w.granted.id,
        summarizer_type: 'llm',
        llm_summarizer_model_id: unpinned!.id,
      });
      expect(res.body.data.warnings).toEqual([
        {
          field: 'llm_summarizer_model_id',
          message: expect.stringMatching(
            new RegExp(
              `^llm_summarizer_model_id: model "${unpinned!.name}" names no provider and \\d+ gemini providers exist`,
            ),
          ) as string,
        },
      ]);
    });
  });
});
