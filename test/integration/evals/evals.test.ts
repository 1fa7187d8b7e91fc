import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startCountingMcpServer } from '../../fixtures/mcp-servers.js';
import { createModel, createVirtualKey } from '../../helpers/factories/config.js';
import { createPrompt, createSchema } from '../../helpers/factories/content.js';
import { uniqueName } from '../../helpers/factories.js';
import { noTemporal } from '../../helpers/services.js';
import { useSessionWorld, waitFor } from '../sessions/session-harness.js';
import {
  EVALS,
  addPromptVersion,
  answering,
  getEval,
  record,
  resultsOf,
  startEval,
  untilEnded,
} from './eval-harness.js';

/** A webhook endpoint that keeps every body it is sent. */
async function receiver(): Promise<{ url: string; bodies: string[]; close(): void }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, bodies, close: () => server.close() };
}

describe.skipIf(noTemporal())('evals: replaying recorded conversations against variants', () => {
  const world = useSessionWorld();

  it('2 conversations × 2 variants: exact match, the judge and the thresholds give the verdict', async () => {
    const { fx } = world;
    fx.vendor.respond = answering;
    const agent = await fx.agent({}, 'You are {{role}}.');
    const [a, b] = [`conv-${randomUUID()}`, `conv-${randomUUID()}`];
    await record(fx, agent.id, a, ['hello', 'how are you']);
    await record(fx, agent.id, b, ['bye']);
    await addPromptVersion(fx, agent.promptName);
    const judgePrompt = await createPrompt(fx.api, fx.projectId, { template: 'You judge answers.' });
    const received = fx.vendor.received.length;
    const hook = await receiver();
    const registered = await fx.api.request('POST', `/api/agent-server/webhooks?project_id=${fx.projectId}`, {
      url: hook.url,
      events: ['eval.completed'],
    });
    expect(registered.status, registered.text).toBe(200);

    const started = await startEval(fx, {
      agent_id: agent.id,
      conversation_ids: [a, b],
      variants: [
        { name: 'same', prompt_version: 1 },
        { name: 'v2', prompt_version: 2, parameters: { temperature: 0.1 } },
      ],
      concurrency: 2,
      judge: { model_id: fx.modelId, prompt_id: judgePrompt.id },
      thresholds: { min_exact_match_rate: 0.5, min_judge_score: 0.5 },
    });
    expect(started.status).toBe('queued');
    const ev = await untilEnded(fx, started.id);
    expect(ev.status, JSON.stringify(ev.error)).toBe('completed');
    expect(ev.progress).toEqual({ turns_total: 6, turns_done: 6 });
    const [same, v2] = ev.totals;
    expect(same).toMatchObject({
      variant: 'same',
      turns: 3,
      completed: 3,
      exact_match_rate: 1,
      mean_judge_score: 0.9,
      input_tokens: 30,
      output_tokens: 12,
      passed: true,
    });
    expect(v2).toMatchObject({
      variant: 'v2',
      turns: 3,
      exact_match_rate: 0,
      mean_judge_score: 0.2,
      passed: false,
    });
    expect(v2!.failures).toEqual([
      expect.stringContaining('exact_match_rate'),
      expect.stringContaining('mean_judge_score'),
    ]);
    expect(ev.passed).toBe(false);
    // Every turn and every judgement is a model call: 6 turns, 6 judgements.
    expect(fx.vendor.received.length - received).toBe(12);

    const results = await resultsOf(fx, ev.id);
    expect(results).toHaveLength(6);
    const second = results.find((r) => r.variant === 'v2' && r.case_key === a && r.turn_index === 1)!;
    expect(second).toMatchObject({
      status: 'completed',
      input: 'how are you',
      expected: 'answer: how are you',
      output: 'changed: how are you',
      exact_match: false,
      judge_score: 0.2,
      judge_reason: 'scored 0.2',
      original: { output: 'answer: how are you' },
    });
    // The variant's turn ran with its overrides, in a scratch conversation of its own.
    const run = await fx.api.request<{ overrides: unknown; conversation_id: string; source: string }>(
      'GET',
      `/api/agent-server/runs/${second.run_id}`,
    );
    expect(run.body.data.overrides).toMatchObject({ parameters: { temperature: 0.1 } });
    expect(run.body.data.conversation_id).toBe(second.conversation_id);
    expect(run.body.data.source).toBe('eval');
    // Scratch conversations stay out of the project's conversations.
    const list = await fx.api.request<Array<{ id: string }>>(
      'GET',
      `/api/agent-server/conversations?project_id=${fx.projectId}&limit=100`,
    );
    expect(list.body.data.map((c) => c.id).sort()).toEqual(expect.arrayContaining([a, b]));
    expect(list.body.data.some((c) => c.id.startsWith('eval-'))).toBe(false);

    const listed = await fx.api.request<Array<{ id: string }>>('GET', `${EVALS}?project_id=${fx.projectId}`);
    expect(listed.body.data.map((e) => e.id)).toContain(ev.id);

    // Its end was announced to the project's webhook, with the eval as data.
    const announced = await waitFor(
      () =>
        hook.bodies
          .map((b) => JSON.parse(b) as { type: string; data: { id: string; passed: boolean } })
          .find((b) => b.data.id === ev.id),
      20_000,
      'the eval.completed delivery',
    );
    hook.close();
    expect(announced).toMatchObject({
      type: 'eval.completed',
      data: { id: ev.id, status: 'completed', passed: false },
    });
  });

  it('tool calls are answered from the recording (the MCP server sees none, no approval waited for); a different call diverges', async () => {
    const { fx } = world;
    const mcp = await startCountingMcpServer();
    try {
      const server = await fx.api.request<{ id: string }>(
        'POST',
        `/api/agent-server/mcp-servers?project_id=${fx.projectId}`,
        { name: uniqueName('mcp'), endpoint: mcp.url },
      );
      // The tool needs a person's approval: given when recording; a replay needs none (it runs nothing).
      const agent = await fx.agent({
        mcp_servers: [{ mcp_server_id: server.body.data.id, tools_requiring_approval: ['charge'] }],
      });
      const conversation = `conv-${randomUUID()}`;
      fx.vendor.script(
        { reply: { tool_calls: [{ name: 'charge', arguments: { cents: 500, note: 'x' } }] } },
        { reply: { text: 'paid' } },
      );
      const paused = await fx.converse({ agent_id: agent.id, conversation_id: conversation, message: 'pay' });
      expect(paused.body.data.status, paused.text).toBe('awaiting_approval');
      const runId = paused.body.data.run_id;
      const pending = (paused.body.data as unknown as { pending_approvals: Array<{ id: string }> })
        .pending_approvals;
      const approved = await fx.api.request('POST', `/api/agent-server/runs/${runId}/approvals`, {
        approved_call_ids: pending.map((p) => p.id),
      });
      expect(approved.status, approved.text).toBe(200);
      await waitFor(async () => {
        const r = await fx.api.request<{ status: string }>('GET', `/api/agent-server/runs/${runId}`);
        return r.body.data.status === 'completed' ? true : undefined;
      });
      expect(mcp.calls).toHaveLength(1);

      fx.vendor.script(
        // The same call, its keys in another order: answered from the recording.
        { reply: { tool_calls: [{ name: 'charge', arguments: { note: 'x', cents: 500 } }] } },
        { reply: { text: 'paid' } },
        // Another amount: diverged.
        { reply: { tool_calls: [{ name: 'charge', arguments: { cents: 900, note: 'x' } }] } },
      );
      const ev = await untilEnded(
        fx,
        (
          await startEval(fx, {
            agent_id: agent.id,
            conversation_ids: [conversation],
            variants: [{ name: 'replayed' }, { name: 'diverging' }],
            concurrency: 1,
          })
        ).id,
      );
      expect(ev.status).toBe('completed');
      expect(mcp.calls).toHaveLength(1);
      const results = await resultsOf(fx, ev.id);
      expect(results.map((r) => [r.variant, r.status, r.exact_match])).toEqual([
        ['replayed', 'completed', true],
        ['diverging', 'diverged', false],
      ]);
      expect(results[1]!.error).toMatchObject({ code: 'replay_diverged' });
      expect(results[1]!.error!.message).toContain('charge');
      const run = await fx.api.request<{ tool_calls: Array<{ output: string }> }>(
        'GET',
        `/api/agent-server/runs/${results[0]!.run_id}`,
      );
      expect(run.body.data.tool_calls).toEqual([expect.objectContaining({ output: 'charged 500 cents' })]);
      expect(ev.totals[1]).toMatchObject({ diverged: 1, exact_match_rate: 0 });
    } finally {
      await mcp.stop();
    }
  });

  it('a dataset eval answers each row in a fresh conversation and compares with expected_output', async () => {
    const { fx } = world;
    fx.vendor.respond = answering;
    const agent = await fx.agent();
    const dataset = await fx.api.request<{ id: string }>(
      'POST',
      `/api/agent-server/datasets?project_id=${fx.projectId}`,
      {
        name: uniqueName('dataset'),
        rows: [
          { input: 'one', expected_output: 'answer: one' },
          { input: 'two', context: { role: 'a clerk' }, expected_output: 'something else' },
        ],
      },
    );
    const ev = await untilEnded(
      fx,
      (
        await startEval(fx, {
          agent_id: agent.id,
          dataset_id: dataset.body.data.id,
          variants: [{ name: 'current' }],
        })
      ).id,
    );
    expect(ev.status).toBe('completed');
    expect(ev.totals[0]).toMatchObject({
      turns: 2,
      exact_match_rate: 0.5,
      cost_ratio: null,
      original_cost_usd: null,
    });
    const results = await resultsOf(fx, ev.id);
    expect(results.map((r) => [r.input, r.output, r.exact_match, r.original])).toEqual([
      ['one', 'answer: one', true, null],
      ['two', 'answer: two', false, null],
    ]);
    expect(new Set(results.map((r) => r.conversation_id)).size).toBe(2);
    // The row's context fills the prompt's variables.
    const clerk = fx.vendor.received.find((r) => JSON.stringify(r.body).includes('a clerk'));
    expect(clerk).toBeDefined();
    // Deleting the agent keeps the eval and its results.
    expect((await fx.api.request('DELETE', `/api/agent-server/agents/${agent.id}`)).status).toBe(200);
    expect(await getEval(fx, ev.id)).toMatchObject({ agent_id: null, status: 'completed' });
    expect(await resultsOf(fx, ev.id)).toHaveLength(2);
  });

  it('an agent with an output schema: each answer checked against it, compared with expected JSON keys sorted', async () => {
    const { fx } = world;
    const schema = await createSchema(fx.api, fx.projectId);
    const agent = await fx.agent({ schema_id: schema.id });
    const dataset = await fx.api.request<{ id: string }>(
      'POST',
      `/api/agent-server/datasets?project_id=${fx.projectId}`,
      {
        name: uniqueName('dataset'),
        rows: [
          { input: 'valid', expected_output: { answer: 'x', n: 1 } },
          { input: 'invalid', expected_output: { answer: 'y' } },
        ],
      },
    );
    fx.vendor.script(
      { reply: { text: '{"n": 1, "answer": "x"}' } },
      // Not JSON, twice (the corrective retry too): the turn fails its schema.
      { reply: { text: 'no json' } },
      { reply: { text: 'still no json' } },
    );
    const ev = await untilEnded(
      fx,
      (
        await startEval(fx, {
          agent_id: agent.id,
          dataset_id: dataset.body.data.id,
          variants: [{ name: 'current' }],
          concurrency: 1,
        })
      ).id,
    );
    expect(ev.totals[0]).toMatchObject({
      completed: 1,
      failed: 1,
      schema_valid_rate: 0.5,
      exact_match_rate: 0.5,
    });
    const results = await resultsOf(fx, ev.id);
    expect(
      results.map((r) => [r.status, r.exact_match, (r as { schema_valid?: unknown }).schema_valid]),
    ).toEqual([
      ['completed', true, true],
      ['failed', false, false],
    ]);
    expect(results[1]!.error).toMatchObject({ code: 'schema_validation_failed' });
  });

  it("the replayed turns and the judge's calls are metered on the project's key, priced like turns", async () => {
    const { fx } = world;
    fx.vendor.respond = answering;
    const vk = await createVirtualKey(fx.api, {
      providers: [{ provider_id: fx.providerId, model_names: ['*'] }],
    });
    const project = await fx.api.request<{ id: string }>('POST', '/api/agent-server/projects', {
      name: uniqueName('metered'),
      virtual_key_id: vk.id,
    });
    const projectId = project.body.data.id;
    const model = await createModel(fx.api, projectId, {
      provider_id: fx.providerId,
      // A model name of its own: prices are looked up by provider and model name.
      model_id: 'gpt-priced',
      pricing: { input_per_million_usd: 1_000, output_per_million_usd: 1_000 },
    });
    const prompt = await createPrompt(fx.api, projectId, { template: 'Be brief.' });
    const judgePrompt = await createPrompt(fx.api, projectId, { template: 'You judge answers.' });
    const agent = await fx.api.request<{ id: string }>(
      'POST',
      `/api/agent-server/agents?project_id=${projectId}`,
      {
        name: uniqueName('agent'),
        model_id: model.id,
        prompt_id: prompt.id,
      },
    );
    const conversation = `conv-${randomUUID()}`;
    const turn = await fx.api.request<{ status: string }>(
      'POST',
      `/api/agent-server/converse?project_id=${projectId}`,
      {
        agent_id: agent.body.data.id,
        conversation_id: conversation,
        message: 'hi',
      },
    );
    expect(turn.body.data.status).toBe('completed');
    const started = await fx.api.request<{ id: string }>('POST', `${EVALS}?project_id=${projectId}`, {
      agent_id: agent.body.data.id,
      conversation_ids: [conversation],
      variants: [{ name: 'current' }],
      judge: { model_id: model.id, prompt_id: judgePrompt.id },
    });
    expect(started.status, started.text).toBe(200);
    const ev = await untilEnded(fx, started.body.data.id);
    // Each call: (tokens in + out) × $1,000 per million.
    expect(ev.totals[0]).toMatchObject({
      cost_usd: 0.014,
      original_cost_usd: 0.014,
      cost_ratio: 1,
      judge_cost_usd: 0.01,
    });
    // The recorded turn, its replay and the judge's call, all on the project's key.
    const usage = await waitFor(async () => {
      const u = await fx.api.request<{
        totals: { requests: number; input_tokens: number; output_tokens: number };
      }>('GET', `/api/agent-server/virtual-keys/${vk.id}/usage`);
      return u.body.data.totals.requests === 3 ? u.body.data.totals : undefined;
    });
    expect(usage).toMatchObject({ input_tokens: 27, output_tokens: 11 });
  });

  it('DELETE cancels a running eval: it ends cancelled and runs nothing more', async () => {
    const { fx } = world;
    const agent = await fx.agent();
    const conversation = `conv-${randomUUID()}`;
    fx.vendor.respond = answering;
    await record(fx, agent.id, conversation, ['first', 'second']);
    fx.vendor.respond = undefined;
    fx.vendor.script({ reply: { text: 'answer: first' }, hold: true });
    const started = await startEval(fx, {
      agent_id: agent.id,
      conversation_ids: [conversation],
      variants: [{ name: 'current' }],
    });
    await fx.vendor.whenHeld();
    const received = fx.vendor.received.length;
    const cancelled = await fx.api.request<{ status: string }>('DELETE', `${EVALS}/${started.id}`);
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body.data.status).toBe('cancelled');
    // The eval's workflow ends, its replays cancelled with it.
    await waitFor(async () => {
      const d = await world.client.workflow.getHandle(`eval/${started.id}`).describe();
      return d.status.name !== 'RUNNING' ? true : undefined;
    });
    const ev = await getEval(fx, started.id);
    expect(ev.status).toBe('cancelled');
    // The turn under way was cancelled too (its model call aborted); the second never ran.
    await waitFor(() => (fx.vendor.aborted === 1 ? true : undefined), 10_000, 'the held call to be aborted');
    fx.vendor.release();
    expect(fx.vendor.received.length).toBe(received);
    expect((await resultsOf(fx, started.id)).filter((r) => r.turn_index === 1)).toEqual([]);
    // A second DELETE answers the eval as it is.
    const again = await fx.api.request<{ status: string }>('DELETE', `${EVALS}/${started.id}`);
    expect(again.body.data.status).toBe('cancelled');
  });

  it('answers 400 naming the field for anything unknown in the project', async () => {
    const { fx } = world;
    fx.vendor.respond = answering;
    const agent = await fx.agent();
    const conversation = `conv-${randomUUID()}`;
    await record(fx, agent.id, conversation, ['hi']);
    const other = await fx.agent();
    const base = { agent_id: agent.id, conversation_ids: [conversation], variants: [{ name: 'a' }] };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...base, agent_id: randomUUID() }, 'agent_id'],
      [{ ...base, conversation_ids: ['nope'] }, 'conversation_ids'],
      [{ ...base, agent_id: other.id }, 'conversation_ids'],
      [{ ...base, conversation_ids: undefined, dataset_id: randomUUID() }, 'dataset_id'],
      [{ ...base, dataset_id: randomUUID() }, 'body'],
      [{ ...base, variants: [] }, 'variants'],
      [{ ...base, variants: [{ name: 'a', model_id: randomUUID() }] }, 'variants.0.model_id'],
      [{ ...base, variants: [{ name: 'a' }, { name: 'b', prompt_version: 7 }] }, 'variants.1.prompt_version'],
      [{ ...base, variants: [{ name: 'a', prompt_label: 'nope' }] }, 'variants.0.prompt_label'],
      [{ ...base, variants: [{ name: 'a', prompt_version: 1, prompt_label: 'latest' }] }, 'variants.0'],
      [{ ...base, judge: { model_id: fx.modelId, prompt_id: randomUUID() } }, 'judge.prompt_id'],
      [{ ...base, judge: { model_id: randomUUID(), prompt_id: agent.promptId } }, 'judge.model_id'],
      [{ ...base, concurrency: 0 }, 'concurrency'],
      [{ ...base, thresholds: { min_exact_match_rate: 2 } }, 'thresholds.min_exact_match_rate'],
    ];
    for (const [body, field] of cases) {
      const res = await fx.api.request('POST', `${EVALS}?project_id=${fx.projectId}`, body);
      expect(res.status, `${field}: ${res.text}`).toBe(400);
      const fields = (res.body as { errorDetails?: { fields?: Array<{ field: string }> } }).errorDetails
        ?.fields;
      expect(
        fields?.map((f) => f.field),
        `${field}: ${res.text}`,
      ).toContain(field);
    }
    expect((await fx.api.request('GET', `${EVALS}/${randomUUID()}`)).status).toBe(404);
    // An eval of another project does not exist for this one.
    const ev = await startEval(fx, base);
    const otherProject = await fx.api.request<{ id: string }>('POST', '/api/agent-server/projects', {
      name: uniqueName('other'),
    });
    expect(
      (await fx.api.request('GET', `${EVALS}/${ev.id}?project_id=${otherProject.body.data.id}`)).status,
    ).toBe(404);
    expect(
      (await fx.api.request('DELETE', `${EVALS}/${ev.id}?project_id=${otherProject.body.data.id}`)).status,
    ).toBe(404);
    expect((await getEval(fx, ev.id)).status).not.toBe('cancelled');
    await untilEnded(fx, ev.id);
  });
});
