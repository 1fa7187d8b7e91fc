/**
 * How long a turn waits when the worker running its model call is killed,
 * with the default heartbeat settings: another worker (already running, as
 * a replica is) takes the call over once the dead one's heartbeat times out.
 * Issue 26 asks for under 10 s at p50 and 15 s at most (printed here, kept
 * in bench/RESULTS.md); the heartbeat
 * timeout (6 s), the worker's heartbeat throttle (2 s) and its sticky-queue
 * timeout (1 s) are what this measures; a healthy call longer than the
 * heartbeat timeout is not retried.
 */
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthenticatedMcpServer } from '../../fixtures/mcp-servers.js';
import { uniqueName } from '../../helpers/factories.js';
import { noTemporal } from '../../helpers/services.js';
import { killHard, sessionEnv, spawnWorker, startFixture, type Fixture } from './session-harness.js';

const ROUNDS = 2;
/**
 * What the test holds the takeover to: the default 6 s heartbeat timeout plus
 * generous slack for a loaded CI machine, far below the activity's 10-minute
 * start-to-close and the ~38 s the old 30 s default took. The figures (the
 * issue's < 10 s p50) are printed and kept in bench/RESULTS.md, not asserted.
 */
const TAKEOVER_BOUND_MS = 20_000;

describe.skipIf(noTemporal())('recovery from a killed worker, default heartbeat settings', () => {
  let fx: Fixture;
  const env = sessionEnv();
  // The defaults, not the harness's short test timeout.
  delete env.SESSION_MODEL_HEARTBEAT_TIMEOUT_MS;

  beforeAll(async () => {
    fx = await startFixture(env);
  });
  afterAll(async () => {
    await fx?.close();
  });

  it('finishes the turn on the other worker once the dead one misses its heartbeat', async () => {
    const recoveries: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      fx.vendor.reset();
      const agent = await fx.agent({}, 'Be brief.');
      fx.vendor.script({ reply: { text: 'cut short' }, hold: true }, { reply: { text: 'whole answer' } });
      const doomed = await spawnWorker(env);
      let survivor: Awaited<ReturnType<typeof spawnWorker>> | undefined;
      try {
        let completedAt = 0;
        const streaming = fx.stream({ agent_id: agent.id, message: 'go' }, (ev) => {
          if (ev.event === 'run.completed') completedAt = ev.at;
        });
        await fx.vendor.whenHeld();
        survivor = await spawnWorker(env);
        const killedAt = performance.now();
        await killHard(doomed.child);
        const events = await streaming;
        expect(events.at(-1)!.event).toBe('run.completed');
        recoveries.push(completedAt - killedAt);
      } finally {
        fx.vendor.release();
        await killHard(doomed.child);
        if (survivor) await killHard(survivor.child);
      }
    }
    console.log(`worker kill → turn completed: ${recoveries.map((r) => (r / 1000).toFixed(1)).join(', ')} s`);
    for (const r of recoveries) expect(r).toBeLessThan(TAKEOVER_BOUND_MS);
  }, 120_000);

  it('finishes a turn whose tool call was on the killed worker once it misses its heartbeat', async () => {
    fx.vendor.reset();
    const mcp = await startAuthenticatedMcpServer({ token: 'tok-k', tenant: 'acme', extraTools: true });
    const doomed = await spawnWorker(env);
    let survivor: Awaited<ReturnType<typeof spawnWorker>> | undefined;
    try {
      const server = await fx.api.request<{ id: string }>(
        'POST',
        `/api/agent-server/mcp-servers?project_id=${fx.projectId}`,
        {
          name: uniqueName('mcp'),
          endpoint: mcp.url,
          headers: { Authorization: 'Bearer tok-k', 'x-tenant': 'acme' },
        },
      );
      const agent = await fx.agent({
        mcp_servers: [{ mcp_server_id: server.body.data.id, tool_filters: ['held'] }],
      });
      fx.vendor.script(
        { reply: { tool_calls: [{ name: 'held', arguments: {} }] } },
        { reply: { text: 'done after the tool' } },
      );
      let completedAt = 0;
      const streaming = fx.stream({ agent_id: agent.id, message: 'go' }, (ev) => {
        if (ev.event === 'run.completed') completedAt = ev.at;
      });
      // The tool is mid-call on the only worker; the other is running before the kill, as a replica is.
      await mcp.whenHeld();
      survivor = await spawnWorker(env);
      const killedAt = performance.now();
      await killHard(doomed.child);
      const events = await streaming;
      expect(events.at(-1)!.event).toBe('run.completed');
      const recovery = completedAt - killedAt;
      console.log(`worker kill mid tool call → turn completed: ${(recovery / 1000).toFixed(1)} s`);
      // The takeover, the tool called again (it answers at once now), and the model's last step.
      expect(recovery).toBeLessThan(TAKEOVER_BOUND_MS);
    } finally {
      await killHard(doomed.child);
      if (survivor) await killHard(survivor.child);
      await mcp.stop();
    }
  }, 90_000);

  it('does not retry a healthy model call that outlasts the heartbeat timeout', async () => {
    fx.vendor.reset();
    const agent = await fx.agent({}, 'Be brief.');
    fx.vendor.script({ reply: { text: 'slow but fine' }, hold: true });
    const worker = await spawnWorker(env);
    try {
      const streaming = fx.stream({ agent_id: agent.id, message: 'go' });
      await fx.vendor.whenHeld();
      // Mid-answer for longer than the 6 s heartbeat timeout.
      await new Promise((r) => setTimeout(r, 11_000));
      fx.vendor.release();
      const events = await streaming;
      expect(events.at(-1)!.event).toBe('run.completed');
      expect(fx.vendor.received).toHaveLength(1);
      expect(fx.vendor.aborted).toBe(0);
    } finally {
      fx.vendor.release();
      await killHard(worker.child);
    }
  }, 60_000);
});
