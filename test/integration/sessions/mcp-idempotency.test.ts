/**
 * MCP tool calls carry an idempotency key in the request's `_meta`
 * (`io.agent-server/idempotency-key`: `<run>:<step>:<call id>`), the same on
 * every attempt of one call: a server that deduplicates by it performs the
 * call's side effect once, even when the worker dies mid-call and another
 * worker makes the call again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCountingMcpServer } from '../../fixtures/mcp-servers.js';
import { uniqueName } from '../../helpers/factories.js';
import { noTemporal } from '../../helpers/services.js';
import { killHard, sessionEnv, spawnWorker, startFixture, type Fixture } from './session-harness.js';

type Worker = Awaited<ReturnType<typeof spawnWorker>>;

describe.skipIf(noTemporal())('idempotency keys of MCP tool calls', () => {
  let fx: Fixture;
  const env = sessionEnv();

  beforeAll(async () => {
    fx = await startFixture(env);
  });
  afterAll(async () => {
    await fx?.close();
  });

  /** An agent offered the counting server's `charge` tool; the model calls it once, then answers. */
  async function chargingAgent(url: string): Promise<{ id: string }> {
    const server = await fx.api.request<{ id: string }>(
      'POST',
      `/api/agent-server/mcp-servers?project_id=${fx.projectId}`,
      { name: uniqueName('mcp'), endpoint: url },
    );
    expect(server.status).toBe(200);
    fx.vendor.script(
      { reply: { tool_calls: [{ name: 'charge', arguments: { cents: 500 } }] } },
      { reply: { text: 'paid' } },
    );
    return fx.agent({ mcp_servers: [{ mcp_server_id: server.body.data.id }] });
  }

  /** The run's one tool call: its run id, step and the model's call id. */
  async function onlyCall(runId: string): Promise<{ step: number; id: string }> {
    const run = await fx.api.request<{ tool_calls: Array<{ step: number; id: string }> }>(
      'GET',
      `/api/agent-server/runs/${runId}`,
    );
    expect(run.body.data.tool_calls).toHaveLength(1);
    return run.body.data.tool_calls[0]!;
  }

  it('sends <run>:<step>:<call id> with the call', async () => {
    fx.vendor.reset();
    const mcp = await startCountingMcpServer();
    const worker = await spawnWorker(env);
    try {
      const agent = await chargingAgent(mcp.url);
      const res = await fx.converse({ agent_id: agent.id, message: 'pay' });
      expect(res.body.data.status).toBe('completed');
      const call = await onlyCall(res.body.data.run_id);
      const key = `${res.body.data.run_id}:${call.step}:${call.id}`;
      expect(mcp.calls).toEqual([key]);
      expect([...mcp.effects]).toEqual([[key, 1]]);
    } finally {
      await killHard(worker.child);
      await mcp.stop();
    }
  }, 90_000);

  it('a call retried after its worker was killed mid-call carries the same key: the side effect happens once', async () => {
    fx.vendor.reset();
    const mcp = await startCountingMcpServer({ holdFirst: true });
    const doomed = await spawnWorker(env);
    let survivor: Worker | undefined;
    try {
      const agent = await chargingAgent(mcp.url);
      let runId = '';
      const streaming = fx.stream({ agent_id: agent.id, message: 'pay' }, (ev) => {
        if (ev.event === 'run.created') runId = ev.data.run_id as string;
      });
      // The charge is made and its answer held: the worker dies before it hears it.
      await mcp.whenHeld();
      survivor = await spawnWorker(env);
      await killHard(doomed.child);
      const events = await streaming;
      expect(events.at(-1)!.event).toBe('run.completed');
      const call = await onlyCall(runId);
      const key = `${runId}:${call.step}:${call.id}`;
      // Called twice (the dead worker's attempt and the retry), with one key, charged once.
      expect(mcp.calls).toEqual([key, key]);
      expect([...mcp.effects]).toEqual([[key, 1]]);
    } finally {
      await killHard(doomed.child);
      if (survivor) await killHard(survivor.child);
      await mcp.stop();
    }
  }, 90_000);
});
