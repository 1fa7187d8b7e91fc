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
  // A dead worker's call is retried elsewhere within seconds.
  const env = sessionEnv({ SESSION_TOOL_HEARTBEAT_TIMEOUT_MS: '3000' });

  beforeAll(async () => {
    fx = await startFixture(env);
  });
  afterAll(async () => {
    await fx?.close();
  });

  /** An agent offered the counting server's `charge` tool; the model calls it once, then answers. */
  async function chargingAgent(url: string, fields: Record<string, unknown> = {}): Promise<{ id: string }> {
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
    return fx.agent({ mcp_servers: [{ mcp_server_id: server.body.data.id }], ...fields });
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

  interface WaitingRun {
    status: string;
    output: { content: string } | null;
    pause: { reason: string; timeout_at: string | null; details: Record<string, unknown> } | null;
    tool_calls: Array<{ id: string; output?: string; is_error?: boolean }>;
  }

  const runOf = async (id: string) =>
    (await fx.api.request<WaitingRun>('GET', `/api/agent-server/runs/${id}`)).body.data;

  async function until(runId: string, status: string): Promise<WaitingRun> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const run = await runOf(runId);
      if (run.status === status) return run;
      if (Date.now() > deadline) throw new Error(`run ${runId} is ${run.status}, not ${status}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /**
   * A non-idempotent tool's call whose worker died after sending it: the run
   * waits for a person (awaiting_decision) instead of calling again.
   */
  async function diedMidCall(fields: Record<string, unknown>) {
    fx.vendor.reset();
    const mcp = await startCountingMcpServer({ holdFirst: true });
    const doomed = await spawnWorker(env);
    const agent = await chargingAgent(mcp.url, { non_idempotent_tools: ['charge'], ...fields });
    let runId = '';
    const streaming = fx.stream({ agent_id: agent.id, message: 'pay' }, (ev) => {
      if (ev.event === 'run.created') runId = ev.data.run_id as string;
    });
    await mcp.whenHeld();
    const survivor = await spawnWorker(env);
    await killHard(doomed.child);
    const waiting = await until(runId, 'awaiting_decision');
    const cleanup = async () => {
      await killHard(doomed.child);
      await killHard(survivor.child);
      await mcp.stop();
    };
    return { mcp, runId, waiting, streaming, cleanup };
  }

  it('a non-idempotent tool whose worker died mid-call waits for a decision; a supplied result answers it', async () => {
    const { mcp, runId, waiting, streaming, cleanup } = await diedMidCall({});
    try {
      expect(waiting.pause).toMatchObject({
        reason: 'decision',
        timeout_at: null,
        details: { name: 'charge' },
      });
      // Not called again: the charge may have happened.
      expect(mcp.calls).toHaveLength(1);
      const wrong = await fx.api.request('POST', `/api/agent-server/runs/${runId}/budget`, {
        action: 'resume',
      });
      expect(wrong.status).toBe(409);
      const missing = await fx.api.request('POST', `/api/agent-server/runs/${runId}/decision`, {
        action: 'supply',
      });
      expect(missing.status).toBe(400);
      expect(JSON.stringify(missing.body)).toContain('result');
      const decided = await fx.api.request<WaitingRun>('POST', `/api/agent-server/runs/${runId}/decision`, {
        action: 'supply',
        result: { output: 'charged 500 cents (checked by hand)', is_error: false },
      });
      expect(decided.status).toBe(200);
      expect(decided.body.data.status).not.toBe('awaiting_decision');
      // The stream answered at the pause, as converse does.
      expect((await streaming).at(-1)!.event).toBe('run.paused');
      const done = await until(runId, 'completed');
      expect(done.output?.content).toBe('paid');
      expect(done.tool_calls[0]).toMatchObject({
        output: 'charged 500 cents (checked by hand)',
        is_error: false,
      });
      expect(mcp.calls).toHaveLength(1);
      // The model's next request carries the supplied result.
      expect(JSON.stringify(fx.vendor.received.at(-1))).toContain('checked by hand');
    } finally {
      await cleanup();
    }
  }, 90_000);

  it('"retry" calls the tool again with the same key; a decision timeout fails the call instead', async () => {
    const retried = await diedMidCall({});
    try {
      const decided = await fx.api.request('POST', `/api/agent-server/runs/${retried.runId}/decision`, {
        action: 'retry',
      });
      expect(decided.status).toBe(200);
      expect((await until(retried.runId, 'completed')).output?.content).toBe('paid');
      expect(retried.mcp.calls).toHaveLength(2);
      expect(new Set(retried.mcp.calls).size).toBe(1);
    } finally {
      await retried.cleanup();
    }

    const timed = await diedMidCall({ decision_timeout_ms: 1_000 });
    try {
      expect(timed.waiting.pause!.timeout_at).not.toBeNull();
      const done = await until(timed.runId, 'completed');
      expect(done.tool_calls[0]).toMatchObject({ is_error: true });
      expect(done.tool_calls[0]!.output).toContain('decision_timeout_ms');
      expect(timed.mcp.calls).toHaveLength(1);
    } finally {
      await timed.cleanup();
    }
  }, 120_000);
});
