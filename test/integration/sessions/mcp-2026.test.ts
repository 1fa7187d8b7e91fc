/**
 * An agent using an MCP server of the 2026-07-28 revision (built with the
 * SDK's v2 server packages, refusing 2025-era traffic): the platform finds
 * the revision once (`server/discover`), remembers it on the server
 * (`protocol_version`) and then speaks the stateless form without probing
 * again; a question asked as an `input_required` result pauses the run like
 * a 2025 elicitation, and once answered the call is retried carrying the
 * person's answer in `inputResponses` with the server's `requestState`
 * unmodified. Real Temporal, Postgres, the scripted vendor.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sessionStateQuery } from '../../../workflows/session.definitions.js';
import { startModern2026Server, type Modern2026Server } from '../../fixtures/mcp-servers-2026.js';
import { uniqueName } from '../../helpers/factories.js';
import { noTemporal } from '../../helpers/services.js';
import { useSessionWorld, waitFor, type SessionWorld } from './session-harness.js';

interface Run {
  run_id: string;
  workflow_id: string;
  status: string;
  output: { content: string } | null;
  pause: { reason: string; details: Record<string, unknown> } | null;
  tool_calls: Array<{ name: string; output?: string; is_error?: boolean }>;
}

const base = '/api/agent-server';

function helpers(world: SessionWorld, mcp: () => Modern2026Server) {
  const api = () => world.fx.api;
  const run = async (id: string) => (await api().request<Run>('GET', `${base}/runs/${id}`)).body.data;
  return {
    run,
    until: (id: string, status: string) =>
      waitFor(async () => ((await run(id)).status === status ? run(id) : undefined), 20_000, `run ${status}`),
    async server() {
      const res = await api().request<{ id: string }>(
        'POST',
        `${base}/mcp-servers?project_id=${world.fx.projectId}`,
        { name: uniqueName('modern'), endpoint: mcp().url },
      );
      expect(res.status).toBe(200);
      return res.body.data.id;
    },
    async turn(serverId: string, call: { name: string; arguments: Record<string, unknown> }, reply: string) {
      world.fx.vendor.script({ reply: { tool_calls: [call] } }, { reply: { text: reply } });
      const agent = await world.fx.agent({ mcp_servers: [{ mcp_server_id: serverId }] });
      const res = await world.fx.converse({ agent_id: agent.id, message: 'go' });
      expect(res.status).toBe(200);
      return res.body.data as unknown as Run;
    },
  };
}

describe.skipIf(noTemporal())('an agent using an MCP server of the 2026-07-28 revision', () => {
  let mcp: Modern2026Server;
  beforeAll(async () => {
    mcp = await startModern2026Server();
  });
  afterAll(async () => {
    await mcp?.stop();
  });
  beforeEach(() => {
    mcp.heard.length = 0;
    mcp.deployed.length = 0;
    mcp.issued.length = 0;
  });

  describe('calls', () => {
    const world = useSessionWorld();
    const h = helpers(world, () => mcp);

    it('lists and calls its tools statelessly, probing once and remembering the revision', async () => {
      const serverId = await h.server();
      const inspected = await world.fx.api.request<{ tools: Array<{ name: string }> }>(
        'POST',
        `${base}/mcp-servers/${serverId}/inspect`,
      );
      expect(inspected.status).toBe(200);
      expect(inspected.body.data.tools.map((t) => t.name).sort()).toEqual(['deploy', 'lookup']);
      const view = await world.fx.api.request<{ protocol_version: string | null }>(
        'GET',
        `${base}/mcp-servers/${serverId}`,
      );
      expect(view.body.data.protocol_version).toBe('2026-07-28');

      const done = await h.turn(serverId, { name: 'lookup', arguments: { city: 'Lyon' } }, 'It is sunny.');
      expect(done.status).toBe('completed');
      expect(done.tool_calls[0]).toMatchObject({ name: 'lookup', output: 'Lyon: 21°C and sunny' });

      const methods = mcp.heard.map((r) => r.method);
      expect(methods).not.toContain('initialize');
      // Discovered at inspect; the turn's listing and call adopted the remembered answer.
      expect(methods.filter((m) => m === 'server/discover')).toHaveLength(1);
      expect(methods.filter((m) => m === 'tools/list')).toHaveLength(2);
      const call = mcp.heard.find((r) => r.method === 'tools/call')!;
      expect(call).toMatchObject({
        protocolVersion: '2026-07-28',
        mcpMethod: 'tools/call',
        mcpName: 'lookup',
      });
    });
  });

  describe('questions asked as input_required, answered while the call waits connected', () => {
    const world = useSessionWorld();
    const h = helpers(world, () => mcp);

    it('the answer goes back at once: one retry with inputResponses and the requestState unmodified', async () => {
      const serverId = await h.server();
      const waiting = await h.turn(serverId, { name: 'deploy', arguments: { env: 'qa' } }, 'Deployed.');
      expect(waiting.status).toBe('awaiting_input');
      await world.fx.api.request('POST', `${base}/runs/${waiting.run_id}/input`, {
        action: 'accept',
        content: { confirm: true },
      });
      const done = await h.until(waiting.run_id, 'completed');
      expect(done.tool_calls[0]).toMatchObject({ name: 'deploy', output: 'deployed to qa' });
      const calls = mcp.heard.filter((r) => r.method === 'tools/call');
      expect(calls.map((c) => c.requestState ?? null)).toEqual([null, 'deploy:qa:1']);
    });
  });

  describe('questions asked as input_required, answered after the call stopped waiting', () => {
    // The call waits connected for half a second, then the session waits for the answer.
    const world = useSessionWorld({ MCP_INPUT_HOLD_MS: '500' });
    const h = helpers(world, () => mcp);

    it('pauses with the question; across a worker restart, the answer resumes the call with its requestState', async () => {
      const serverId = await h.server();
      const waiting = await h.turn(serverId, { name: 'deploy', arguments: { env: 'staging' } }, 'Deployed.');
      expect(waiting.status).toBe('awaiting_input');
      expect(waiting.pause).toMatchObject({
        reason: 'input',
        details: { tool: 'deploy', message: 'Deploy to staging?', mode: 'form' },
      });
      expect(mcp.deployed).toEqual([]);
      // The call has stopped waiting (the session holds the wait); the worker is replaced meanwhile.
      await waitFor(
        async () => {
          const state = await world.client.workflow.getHandle(waiting.workflow_id).query(sessionStateQuery);
          return state.pending_step === 'awaiting_input' ? true : undefined;
        },
        10_000,
        'the session to wait for input',
      );
      await world.stopWorker();
      await world.restartWorker();

      const answered = await world.fx.api.request<Run>('POST', `${base}/runs/${waiting.run_id}/input`, {
        action: 'accept',
        content: { confirm: true },
      });
      expect(answered.status).toBe(200);
      const done = await h.until(waiting.run_id, 'completed');
      expect(done.tool_calls[0]).toMatchObject({ name: 'deploy', output: 'deployed to staging' });
      expect(mcp.deployed).toEqual(['staging']);

      // Not made afresh: the server asked once, and the retry echoes that round's state.
      expect(mcp.issued).toEqual(['deploy:staging:1']);
      const calls = mcp.heard.filter((r) => r.method === 'tools/call');
      expect(calls).toHaveLength(2);
      expect(calls[1]).toMatchObject({
        requestState: 'deploy:staging:1',
        inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
      });
    });

    it('a declined question reaches the server as declined, and nothing is deployed', async () => {
      const serverId = await h.server();
      const waiting = await h.turn(serverId, { name: 'deploy', arguments: { env: 'prod' } }, 'Not deployed.');
      expect(waiting.status).toBe('awaiting_input');
      await world.fx.api.request('POST', `${base}/runs/${waiting.run_id}/input`, { action: 'decline' });
      const done = await h.until(waiting.run_id, 'completed');
      expect(done.tool_calls[0]).toMatchObject({ name: 'deploy', output: 'not deployed to prod' });
      expect(mcp.deployed).toEqual([]);
    });
  });
});
