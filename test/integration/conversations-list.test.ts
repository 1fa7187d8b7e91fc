/**
 * The conversation list's figures: each conversation's latest run (agent and
 * status) and what its runs cost, summed as each run's view counts it — the
 * cost recorded with the run, else its tokens at its model's price.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunStatus } from '../../core/db/tables/index.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProject } from '../helpers/factories.js';
import {
  CONVERSATIONS,
  createConversation,
  createPrompt,
  db,
  insertAgent,
  insertThread,
} from '../helpers/factories/content.js';

interface ListedConversation {
  id: string;
  last_run: { run_id: string; agent_id: string | null; agent_name: string | null; status: string } | null;
  run_count: number;
  cost_usd: number | null;
}

describe('the conversation list', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    await api.close();
  });

  /** A run of the thread as a finished turn leaves it: its plan's model and its usage. */
  async function insertRun(
    threadId: string,
    fields: { agentId: string; modelRowId: string; status: RunStatus; usage: object; at: string },
  ) {
    const thread = await db(api)('threads as t')
      .join('conversations as c', 'c.pk', 't.conversation_pk')
      .where('t.id', threadId)
      .first<{ conversation_pk: string; project_id: string }>('t.conversation_pk', 'c.project_id');
    const id = randomUUID();
    await db(api)('runs').insert({
      id,
      project_id: thread.project_id,
      conversation_pk: thread.conversation_pk,
      thread_id: threadId,
      agent_id: fields.agentId,
      message_id: randomUUID(),
      request_hash: 'x',
      workflow_id: `session/${fields.agentId}/x`,
      status: fields.status,
      usage: JSON.stringify(fields.usage),
      plan: JSON.stringify({ model: { id: fields.modelRowId, model_id: 'gpt-test' } }),
      created_at: new Date(fields.at),
    });
    return id;
  }

  it("shows each conversation's latest run and its runs' summed cost, in one page", async () => {
    const project = await createProject(api);
    const prompt = await createPrompt(api, project.id);
    const first = await insertAgent(api, project.id, { prompt_id: prompt.id });
    const second = await insertAgent(api, project.id, { prompt_id: prompt.id });
    // $2 per million input tokens, $8 per million output tokens.
    await db(api)('models')
      .where({ id: first.model_id })
      .update({ pricing: JSON.stringify({ input_per_million_usd: 2, output_per_million_usd: 8 }) });
    const busy = await createConversation(api, project.id);
    const idle = await createConversation(api, project.id);
    const t1 = await insertThread(api, project.id, busy.id, first.id);
    const t2 = await insertThread(api, project.id, busy.id, second.id);
    // A run whose cost was recorded, and one priced from its model: 1000 × $2/M + 500 × $8/M = $0.006.
    await insertRun(t1, {
      agentId: first.id,
      modelRowId: first.model_id,
      status: 'completed',
      usage: { input_tokens: 10, output_tokens: 10, cost_usd: 0.25 },
      at: '2026-01-01T00:00:00Z',
    });
    await insertRun(t1, {
      agentId: first.id,
      modelRowId: first.model_id,
      status: 'completed',
      usage: { input_tokens: 1000, output_tokens: 500 },
      at: '2026-01-01T00:01:00Z',
    });
    const latest = await insertRun(t2, {
      agentId: second.id,
      modelRowId: second.model_id,
      status: 'awaiting_approval',
      usage: { input_tokens: 0, output_tokens: 0 },
      at: '2026-01-01T00:02:00Z',
    });

    const res = await api.request<ListedConversation[]>('GET', `${CONVERSATIONS}?project_id=${project.id}`);
    expect(res.status).toBe(200);
    const byId = new Map(res.body.data.map((c) => [c.id, c]));
    expect(byId.get(busy.id)).toMatchObject({
      last_run: { run_id: latest, agent_id: second.id, agent_name: second.name, status: 'awaiting_approval' },
      run_count: 3,
      cost_usd: 0.256,
    });
    expect(byId.get(idle.id)).toMatchObject({ last_run: null, run_count: 0, cost_usd: null });
  });
});
