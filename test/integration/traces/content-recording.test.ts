import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentTelemetry } from '../../../core/telemetry/telemetry.js';
import { startAuthenticatedMcpServer, type RunningMcp } from '../../fixtures/mcp-servers.js';
import { uniqueName } from '../../helpers/factories.js';
import { noTemporal } from '../../helpers/services.js';
import { useSessionWorld, waitFor } from '../sessions/session-harness.js';

interface Row {
  name: string;
  attributes: Record<string, unknown>;
}

const P = '/api/agent-server/projects';

/**
 * A project's `record_content` decides whether its turns' model spans carry
 * the prompt and the completion, and its tool spans the arguments and the
 * result; a span says which it is. Recorded content goes with its conversation.
 */
describe.skipIf(noTemporal())("content recording follows the project's record_content", () => {
  const world = useSessionWorld();
  const db = () => world.fx.api.server.deps.db;
  let mcp: RunningMcp;
  let agentId: string;

  beforeAll(async () => {
    mcp = await startAuthenticatedMcpServer({ token: 'tok-c', tenant: 'initech' });
    const server = await world.fx.api.request<{ id: string }>(
      'POST',
      `/api/agent-server/mcp-servers?project_id=${world.fx.projectId}`,
      {
        name: uniqueName('mcp'),
        endpoint: mcp.url,
        headers: { Authorization: 'Bearer tok-c', 'x-tenant': 'initech' },
      },
    );
    agentId = (
      await world.fx.agent({
        mcp_servers: [{ mcp_server_id: server.body.data.id, tool_filters: ['whoami'] }],
      })
    ).id;
  }, 60_000);
  afterAll(async () => {
    await mcp?.stop();
  });

  const setRecording = async (on: boolean) => {
    const res = await world.fx.api.request<{ record_content: boolean }>(
      'PATCH',
      `${P}/${world.fx.projectId}`,
      {
        record_content: on,
      },
    );
    expect(res.status).toBe(200);
    expect(res.body.data.record_content).toBe(on);
  };

  /** A turn that calls the MCP tool with `greeting`, then answers `answer`; its model and tool spans. */
  async function turn(message: string, greeting: string, answer: string) {
    world.fx.vendor.script(
      { reply: { tool_calls: [{ name: 'whoami', arguments: { greeting } }] } },
      { reply: { text: answer } },
    );
    const res = await world.fx.converse({ agent_id: agentId, message });
    expect(res.body.data.status).toBe('completed');
    const traceId = res.body.data.trace_id!;
    const spans = await waitFor(
      async () => {
        await currentTelemetry()?.flush();
        const rows = await db()('spans').where({ trace_id: traceId }).select<Row[]>('name', 'attributes');
        const models = rows.filter((s) => s.name === 'chat gpt-test');
        return models.length === 2 && rows.some((s) => s.name === 'mcp.tools.call whoami') ? rows : undefined;
      },
      20_000,
      'the turn spans',
    );
    return {
      run: res.body.data,
      models: spans.filter((s) => s.name === 'chat gpt-test').map((s) => s.attributes),
      tool: spans.find((s) => s.name === 'mcp.tools.call whoami')!.attributes,
    };
  }

  it('is off for a new project', async () => {
    const created = await world.fx.api.request<{ id: string; record_content: boolean }>('POST', P, {
      name: uniqueName('project'),
    });
    expect(created.body.data.record_content).toBe(false);
    await world.fx.api.request('DELETE', `${P}/${created.body.data.id}`);
  });

  it('on: prompts, completions, tool arguments and results are on the spans', async () => {
    await setRecording(true);
    const { models, tool } = await turn('what is the parcel-7731 status', 'hullo-4411', 'shipped-9920');
    for (const m of models) expect(m['agent_server.content.recorded']).toBe(true);
    expect(models.map((m) => String(m['gen_ai.input.messages']))).toEqual([
      expect.stringContaining('parcel-7731'),
      expect.stringContaining('parcel-7731'),
    ]);
    // The first call answers with the tool call, the second with the text.
    expect(models.map((m) => String(m['gen_ai.output.messages']))).toContain('shipped-9920');
    expect(tool['agent_server.content.recorded']).toBe(true);
    expect(String(tool['gen_ai.tool.call.arguments'])).toContain('hullo-4411');
    expect(String(tool['gen_ai.tool.call.result'])).toContain('hullo-4411 initech');
  });

  it('off: no content, and the spans say it was not recorded', async () => {
    await setRecording(false);
    const { models, tool } = await turn('what is the parcel-5512 status', 'hullo-6620', 'shipped-3381');
    for (const m of models) {
      expect(m['agent_server.content.recorded']).toBe(false);
      expect(m['gen_ai.input.messages']).toBeUndefined();
      expect(m['gen_ai.output.messages']).toBeUndefined();
    }
    expect(tool['agent_server.content.recorded']).toBe(false);
    expect(tool['gen_ai.tool.call.arguments']).toBeUndefined();
    expect(tool['gen_ai.tool.call.result']).toBeUndefined();
    expect(JSON.stringify([models, tool])).not.toMatch(/parcel-5512|hullo-6620|shipped-3381/);
  });

  it('deleting the conversation deletes the content recorded of it', async () => {
    await setRecording(true);
    const { run } = await turn('the secret word is zebra-5150', 'hullo-8080', 'noted-2718');
    const holding = () =>
      db()('spans')
        .whereRaw('attributes::text like ?', ['%zebra-5150%'])
        .count<{ n: string }>('* as n')
        .first()
        .then((r) => Number(r?.n ?? 0));
    expect(await holding()).toBeGreaterThan(0);
    const deleted = await world.fx.api.request(
      'DELETE',
      `/api/agent-server/conversations/${run.conversation_id}?project_id=${world.fx.projectId}`,
    );
    expect(deleted.status).toBe(200);
    await waitFor(
      async () => {
        await currentTelemetry()?.flush();
        return (await holding()) === 0 ? true : undefined;
      },
      20_000,
      'the recorded content to be deleted',
    );
    // (Workflow spans that end with the session's termination land after the delete, content-free;
    // the deletion's late sweeps take them: test/integration/sessions/conversation-delete.test.ts.)
  });

  it('deleting a project deletes the traces that name it, content included', async () => {
    const project = await world.fx.api.request<{ id: string }>('POST', P, { name: uniqueName('gone') });
    const projectId = project.body.data.id;
    const hex = (n: number) => randomBytes(n).toString('hex');
    const [gone, kept] = [hex(16), hex(16)];
    const span = (traceId: string, attributes: Record<string, unknown>, parent: string | null = null) => ({
      trace_id: traceId,
      span_id: hex(8),
      parent_span_id: parent,
      name: 'chat gpt-test',
      kind: 'CLIENT',
      service_name: 'agent-server-worker',
      start_time: new Date(),
      end_time: new Date(),
      duration_ms: 1,
      status_code: 'UNSET',
      attributes: JSON.stringify(attributes),
      project_id: (attributes['agent_server.project.id'] as string | undefined) ?? null,
    });
    // A turn's spans that outlived its conversation (exported late), and another project's.
    await db()('spans').insert([
      span(gone, { 'agent_server.project.id': projectId, 'gen_ai.input.messages': 'orphan-4242' }),
      span(gone, {}, hex(8)),
      span(kept, { 'agent_server.project.id': world.fx.projectId }),
    ]);
    expect((await world.fx.api.request('DELETE', `${P}/${projectId}`)).status).toBe(200);
    const left = await db()('spans').whereIn('trace_id', [gone, kept]).pluck('trace_id');
    expect(left).toEqual([kept]);
  });
});
