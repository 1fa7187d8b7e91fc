/**
 * An eval survives its worker's death: another worker resumes it, and the
 * turns already written are not replayed again (the one cut mid-answer is).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noTemporal } from '../../helpers/services.js';
import {
  killHard,
  sessionEnv,
  spawnWorker,
  startFixture,
  type Fixture,
} from '../sessions/session-harness.js';
import { answering, lastUser, record, resultsOf, startEval, untilEnded } from './eval-harness.js';

describe.skipIf(noTemporal())('evals across a worker kill', () => {
  let fx: Fixture;
  const env = sessionEnv({
    SESSION_MODEL_HEARTBEAT_TIMEOUT_MS: '2000',
    SESSION_TOOL_HEARTBEAT_TIMEOUT_MS: '2000',
  });

  beforeAll(async () => {
    fx = await startFixture(env);
  });
  afterAll(async () => {
    await fx?.close();
  });

  it('SIGKILL of the worker mid-eval: another worker finishes it without re-running finished turns', async () => {
    fx.vendor.respond = answering;
    const first = await spawnWorker(env);
    let second: Awaited<ReturnType<typeof spawnWorker>> | undefined;
    try {
      const agent = await fx.agent();
      const conversation = `conv-${randomUUID()}`;
      await record(fx, agent.id, conversation, ['one', 'two', 'three']);
      const recorded = fx.vendor.received.length;
      let held = false;
      // The replay of turn two is held mid-answer the first time: the worker dies then.
      fx.vendor.respond = (body) => {
        const script = answering(body);
        if (lastUser(body) !== 'two' || held) return script;
        held = true;
        return { ...script, hold: true };
      };
      const started = await startEval(fx, {
        agent_id: agent.id,
        conversation_ids: [conversation],
        variants: [{ name: 'current' }],
        concurrency: 1,
      });
      await fx.vendor.whenHeld();
      await killHard(first.child);
      fx.vendor.release();
      second = await spawnWorker(env);
      const ev = await untilEnded(fx, started.id, 90_000);
      expect(ev.status, JSON.stringify(ev.error)).toBe('completed');
      expect(ev.totals[0]).toMatchObject({ turns: 3, completed: 3, exact_match_rate: 1 });
      const results = await resultsOf(fx, started.id);
      expect(results.map((r) => [r.turn_index, r.status, r.output])).toEqual([
        [0, 'completed', 'answer: one'],
        [1, 'completed', 'answer: two'],
        [2, 'completed', 'answer: three'],
      ]);
      // Turn one was answered once; turn two twice (cut by the kill, then again); turn three once.
      const asked = fx.vendor.received.slice(recorded).map((r) => lastUser(r.body));
      expect(asked.filter((m) => m === 'one')).toHaveLength(1);
      expect(asked.filter((m) => m === 'two')).toHaveLength(2);
      expect(asked.filter((m) => m === 'three')).toHaveLength(1);
    } finally {
      fx.vendor.release();
      await killHard(first.child);
      if (second) await killHard(second.child);
    }
  }, 150_000);
});
