/**
 * The MCP door (`/api/mcp/{project_id}`) driven by the official MCP clients
 * of both revisions against the real stack (Temporal, a worker, Postgres)
 * with the scripted vendor: the project's agents that opt in are tools, a
 * call is a converse turn (recorded as source `mcp`), its steps are progress
 * notifications, and an approval pause asks the caller (elicitation over a
 * 2025-11-25 session, `input_required` in 2026-07-28) or answers with the
 * console's link.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEverythingServer, type RunningMcp } from '../../fixtures/mcp-servers.js';
import { createSchema } from '../../helpers/factories/content.js';
import { uniqueName } from '../../helpers/factories.js';
import { noTemporal } from '../../helpers/services.js';
import { sentMessages, useSessionWorld, waitFor, type RunData } from '../sessions/session-harness.js';
import { connectV1, connectV2, type CallResult, type McpTestClient, type Progress } from './mcp-clients.js';

const CLIENTS = [
  ['v1 SDK, 2025-11-25 session', connectV1, '2025-11-25'],
  ['v2 client, 2026-07-28', connectV2, '2026-07-28'],
] as const;

type RpcError = { error: { code: number; message: string } };

const turnOf = (r: CallResult) =>
  r._meta?.['agent-server/turn'] as { run_id: string; conversation_id: string };

describe.skipIf(noTemporal())('MCP door: agents as tools', () => {
  const world = useSessionWorld();
  let url: string;
  let plain: { id: string; name: string };
  let structured: { id: string; name: string };

  /** An agent served over MCP (`expose.mcp`), with the given name and fields. */
  async function exposed(name: string, fields: Record<string, unknown> = {}, template = 'You are {{role}}.') {
    const agent = await world.fx.agent({ name, expose: { mcp: true, a2a: false }, ...fields }, template);
    return { id: agent.id, name };
  }

  const run = async (runId: string) =>
    (
      await world.fx.api.request<RunData & { source: string; pending_approvals: Array<{ id: string }> }>(
        'GET',
        `/api/agent-server/runs/${runId}`,
      )
    ).body.data;

  beforeAll(async () => {
    url = `${world.fx.api.url}/api/mcp/${world.fx.projectId}`;
    plain = await exposed(uniqueName('helper agent'), { description: 'Answers questions' });
    const schema = await createSchema(world.fx.api, world.fx.projectId);
    structured = await exposed(uniqueName('json'), {}, 'Answer in JSON.');
    await world.fx.api.request('PATCH', `/api/agent-server/agents/${structured.id}`, {
      schema_id: schema.id,
    });
    await world.fx.agent({ name: uniqueName('private') }); // not exposed
  });

  describe.each(CLIENTS)('%s', (_label, connect, revision) => {
    let client: McpTestClient;
    beforeAll(async () => {
      client = await connect(url);
    });
    afterAll(async () => {
      await client?.close();
    });

    it('negotiates its revision and lists exactly the exposed agents, named by the tool-name rule', async () => {
      expect(client.revision).toBe(revision);
      if (revision === '2025-11-25') expect(client.sessionId).toMatch(/^[\x21-\x7e]+$/);
      const tools = await client.listTools();
      const byTitle = new Map(tools.map((t) => [t.title, t]));
      expect([...byTitle.keys()].sort()).toEqual([plain.name, structured.name].sort());
      const tool = byTitle.get(plain.name)!;
      expect(tool.name).toBe(plain.name.replace(/[^A-Za-z0-9_.-]/g, '_'));
      expect(tool.description).toBe('Answers questions');
      expect(tool.inputSchema).toMatchObject({ type: 'object', required: ['message'] });
      expect(Object.keys((tool.inputSchema as { properties: object }).properties)).toEqual([
        'message',
        'conversation_id',
      ]);
      expect(byTitle.get(structured.name)!.outputSchema).toMatchObject({ type: 'object' });
      // The same order every time (clients cache and compare lists).
      expect((await client.listTools()).map((t) => t.name)).toEqual(tools.map((t) => t.name));
    });

    it('a call is one converse turn (source mcp) with its steps as progress; conversation_id continues it', async () => {
      const name = plain.name.replace(/[^A-Za-z0-9_.-]/g, '_');
      world.fx.vendor.script({ reply: { text: 'Paris.' } }, { reply: { text: 'About 2.1 million.' } });
      const progress: Progress[] = [];
      const first = await client.call(name, { message: 'Capital of France?' }, (p) => progress.push(p));
      expect(first.isError ?? false).toBe(false);
      expect(first.content).toEqual([{ type: 'text', text: 'Paris.' }]);
      const turn = turnOf(first);
      expect(await run(turn.run_id)).toMatchObject({
        status: 'completed',
        source: 'mcp',
        agent_id: plain.id,
      });
      expect(progress.length).toBeGreaterThanOrEqual(3);
      expect(progress.map((p) => p.progress)).toEqual(progress.map((_, i) => i + 1));
      expect(progress.at(-1)!.message).toBe('turn completed');

      const second = await client.call(name, {
        message: 'Its population?',
        conversation_id: turn.conversation_id,
      });
      expect(second.content[0]!.text).toBe('About 2.1 million.');
      expect(turnOf(second).conversation_id).toBe(turn.conversation_id);
      expect(sentMessages(world.fx.vendor, 1).map((m) => m.content)).toContain('Paris.');
    });

    it('an agent with a schema answers with structuredContent', async () => {
      world.fx.vendor.script({ reply: { text: '{"answer":"42"}' } });
      const res = await client.call(structured.name, { message: 'meaning?' });
      expect(res.structuredContent).toEqual({ answer: '42' });
      expect(res.content[0]!.text).toBe('{"answer":"42"}');
    });

    it('a caller that cancels the call cancels the turn (what it produced kept)', async () => {
      const name = plain.name.replace(/[^A-Za-z0-9_.-]/g, '_');
      world.fx.vendor.script({ reply: { text: 'a long answer never finished' }, hold: true });
      const conversationId = `mcp-cancel-${revision}-${Date.now()}`;
      const controller = new AbortController();
      const call = client.call(
        name,
        { message: 'take your time', conversation_id: conversationId },
        undefined,
        controller.signal,
      );
      await world.fx.vendor.whenHeld();
      controller.abort('the user gave up');
      await expect(call).rejects.toThrow();
      const runs = async () =>
        (
          await world.fx.api.request<Array<{ status: string; source: string }>>(
            'GET',
            `/api/agent-server/conversations/${conversationId}/runs?project_id=${world.fx.projectId}`,
          )
        ).body.data;
      const cancelled = await waitFor(
        async () => {
          const [r] = await runs();
          return r?.status === 'cancelled' ? r : undefined;
        },
        20_000,
        'the turn cancelled',
      );
      expect(cancelled.source).toBe('mcp');
      world.fx.vendor.release();
      world.fx.vendor.rearm();
    });

    it('bad input: an unknown tool is a JSON-RPC error, bad arguments a tool error naming the field', async () => {
      await expect(client.call('no_such_agent', { message: 'x' })).rejects.toThrow(/Unknown tool/);
      const name = plain.name.replace(/[^A-Za-z0-9_.-]/g, '_');
      const missing = await client.call(name, {});
      expect(missing.isError).toBe(true);
      expect(missing.content[0]!.text).toMatch(/"message" is required/);
      const badConversation = await client.call(name, { message: 'x', conversation_id: 'has spaces' });
      expect(badConversation.content[0]!.text).toMatch(/conversation_id/);
      expect(world.fx.vendor.received).toHaveLength(0);
    });
  });

  describe('a turn that pauses for approval', () => {
    let everything: RunningMcp;
    let approver: { id: string; name: string };
    beforeAll(async () => {
      everything = await startEverythingServer('streamableHttp');
      const server = await world.fx.api.request<{ id: string }>(
        'POST',
        `/api/agent-server/mcp-servers?project_id=${world.fx.projectId}`,
        { name: uniqueName('mcp'), endpoint: everything.url },
      );
      approver = await exposed(uniqueName('approver'), {
        mcp_servers: [
          { mcp_server_id: server.body.data.id, tool_filters: ['echo'], tools_requiring_approval: ['echo'] },
        ],
      });
    }, 60_000);
    afterAll(async () => {
      await everything?.stop();
    });

    const scriptEcho = () =>
      world.fx.vendor.script(
        { reply: { tool_calls: [{ name: 'echo', arguments: { message: 'approved words' } }] } },
        { reply: { text: 'done with it' } },
      );
    /** The tool result the model saw in its second call (the echo, or the refusal). */
    const toolAnswer = () =>
      JSON.stringify(sentMessages(world.fx.vendor, 1).filter((m) => m.role === 'tool'));

    it.each(CLIENTS)('%s: the caller is asked and a yes runs the call', async (_l, connect) => {
      const asked: string[] = [];
      const client = await connect(url, {
        elicit: (p) => {
          asked.push(p.message);
          return { action: 'accept', content: { approve: true } };
        },
      });
      try {
        scriptEcho();
        const res = await client.call(approver.name, { message: 'echo please' });
        expect(asked).toEqual([expect.stringMatching(/wants to call .*echo.*approved words.*Approve\?/)]);
        expect(res.isError ?? false).toBe(false);
        expect(res.content[0]!.text).toBe('done with it');
        expect(toolAnswer()).toMatch(/approved words/);
        const view = await run(turnOf(res).run_id);
        expect(view.status).toBe('completed');
      } finally {
        await client.close();
      }
    });

    it.each(CLIENTS)('%s: declining rejects the call; the model is told', async (_l, connect) => {
      const client = await connect(url, { elicit: () => ({ action: 'decline' }) });
      try {
        scriptEcho();
        const res = await client.call(approver.name, { message: 'echo please' });
        expect(res.content[0]!.text).toBe('done with it');
        expect(toolAnswer()).toMatch(/declined/i);
      } finally {
        await client.close();
      }
    });

    it.each(CLIENTS)(
      '%s: a caller that cannot be asked gets the pause and the console link',
      async (_l, connect) => {
        const client = await connect(url);
        try {
          scriptEcho();
          const res = await client.call(approver.name, { message: 'echo please' });
          expect(res.isError).toBe(true);
          expect(res.content[0]!.text).toMatch(/paused, waiting for approval of echo/);
          expect(res.content[0]!.text).toContain(`${world.fx.api.url}/console/waiting`);
          const turn = turnOf(res);
          expect((await run(turn.run_id)).status).toBe('awaiting_approval');
          // Decided through the REST API, the turn goes on without the caller.
          const decided = await world.fx.api.request(
            'POST',
            `/api/agent-server/runs/${turn.run_id}/approvals`,
            { rejected_call_ids: [(await run(turn.run_id)).pending_approvals[0]!.id], wait: true },
          );
          expect(decided.status).toBe(200);
        } finally {
          await client.close();
        }
      },
    );
  });

  describe('the HTTP edge answers JSON-RPC errors, never a 500', () => {
    const post = (path: string, body: string, headers: Record<string, string> = {}) =>
      fetch(`${world.fx.api.url}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body,
      });
    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });

    it('unknown project 404, malformed project id 400, unreadable body -32700, wrong type 415, unknown session 404', async () => {
      const unknown = await post('/api/mcp/00000000-0000-4000-8000-000000000000', init);
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { message: 'Project not found' },
      });
      const malformed = await post('/api/mcp/not-a-uuid', init);
      expect(malformed.status).toBe(400);
      expect(((await malformed.json()) as RpcError).error.code).toBe(-32602);
      const broken = await post(`/api/mcp/${world.fx.projectId}`, '{"jsonrpc":');
      expect(broken.status).toBe(400);
      expect(((await broken.json()) as RpcError).error.code).toBe(-32700);
      const text = await post(`/api/mcp/${world.fx.projectId}`, init, { 'content-type': 'text/plain' });
      expect(text.status).toBe(415);
      expect(((await text.json()) as RpcError).error.code).toBe(-32600);
      const session = await post(
        `/api/mcp/${world.fx.projectId}`,
        JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
        { 'mcp-session-id': 'gone', 'mcp-protocol-version': '2025-11-25' },
      );
      expect(session.status).toBe(404);
      expect(((await session.json()) as RpcError).error.message).toBe('Session not found');
    });

    it('a session belongs to its project: the same id under another project is not found', async () => {
      const opened = await post(`/api/mcp/${world.fx.projectId}`, init);
      const id = opened.headers.get('mcp-session-id')!;
      await opened.text();
      expect(id).toBeTruthy();
      const other = (
        await world.fx.api.request<{ id: string }>('POST', '/api/agent-server/projects', {
          name: uniqueName('p'),
        })
      ).body.data.id;
      const res = await post(
        `/api/mcp/${other}`,
        JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
        {
          'mcp-session-id': id,
          'mcp-protocol-version': '2025-11-25',
        },
      );
      expect(res.status).toBe(404);
    });
  });
});
