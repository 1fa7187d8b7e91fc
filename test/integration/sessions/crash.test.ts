import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { freePort } from '../../helpers/ports.js';
import { noTemporal } from '../../helpers/services.js';
import {
  CONVERSE,
  killHard,
  readSse,
  sessionEnv,
  spawnWorker,
  startFixture,
  startInProcessWorker,
  waitFor,
  type Fixture,
  type SseEvent,
} from './session-harness.js';

const skip = noTemporal();

/** Text of the answer as a reader of the events sees it (a `message.restarted` drops the step's text). */
function streamedText(events: SseEvent[], step: number): string {
  let text = '';
  for (const e of events) {
    if (e.data.step !== step) continue;
    if (e.event === 'message.restarted') text = '';
    if (e.event === 'message.delta') text += e.data.text as string;
  }
  return text;
}

describe.skipIf(skip)('crash safety: processes killed mid-turn', () => {
  let fx: Fixture;
  const env = sessionEnv({ SESSION_MODEL_HEARTBEAT_TIMEOUT_MS: '2000' });

  beforeAll(async () => {
    fx = await startFixture(env);
  });
  afterAll(async () => {
    await fx?.close();
  });

  it('SIGKILL of the worker while the model is mid-answer: the turn completes once, nothing lost or repeated', async () => {
    fx.vendor.reset();
    const agent = await fx.agent({}, 'Be brief.');
    const answer = 'alpha beta gamma delta';
    fx.vendor.script(
      // Step 1 finishes (a tool call); step 2 is cut by the crash, then answered again.
      { reply: { tool_calls: [{ name: 'lookup', arguments: { q: 1 } }], usage: { input: 10, output: 2 } } },
      { reply: { text: answer, usage: { input: 20, output: 4 } }, hold: true },
      { reply: { text: answer, usage: { input: 20, output: 4 } } },
    );
    const first = await spawnWorker(env);
    let second: Awaited<ReturnType<typeof spawnWorker>> | undefined;
    try {
      const streaming = fx.stream({ agent_id: agent.id, message: 'go' });
      await fx.vendor.whenHeld();
      await killHard(first.child);
      second = await spawnWorker(env);
      const events = await streaming;

      expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
      const done = events.at(-1)!;
      expect(done.event).toBe('run.completed');
      // The reader saw the answer once, whole.
      expect(streamedText(events, 2)).toBe(answer);
      const runId = (events[0]!.data as { run_id: string }).run_id;
      const run = await fx.api.request<{
        status: string;
        output: { content: string };
        usage: unknown;
        thread_id: string;
      }>('GET', `/api/agent-server/runs/${runId}`);
      expect(run.body.data).toMatchObject({
        status: 'completed',
        output: { content: answer },
        // Usage counts each stored step once: 10+20 in, 2+4 out.
        usage: { input_tokens: 30, output_tokens: 6 },
      });
      // The run lists the step-1 call with its result.
      expect((run.body.data as unknown as { tool_calls: unknown[] }).tool_calls).toEqual([
        expect.objectContaining({ name: 'lookup', step: 1, is_error: true }),
      ]);
      // The completed step-1 call was not made again: step 1 once, step 2 twice (the first cut).
      expect(fx.vendor.received).toHaveLength(3);
      expect(fx.vendor.aborted).toBe(1);
      const messages = await fx.api.server.deps
        .db('messages')
        .where({ thread_id: run.body.data.thread_id })
        .orderBy('seq')
        .select('role', 'step_key');
      expect(messages).toEqual([
        { role: 'user', step_key: 'user' },
        { role: 'assistant', step_key: '1.assistant' },
        { role: 'tool', step_key: expect.stringMatching(/^1\.tool\./) as string },
        { role: 'assistant', step_key: '2.assistant' },
      ]);
      expect(events.filter((e) => e.event === 'run.completed')).toHaveLength(1);
      expect(events.filter((e) => e.event === 'tool_call.completed')).toHaveLength(1);
    } finally {
      fx.vendor.release();
      await killHard(first.child);
      if (second) await killHard(second.child);
    }
  });

  it('SIGKILL of the API mid-stream: the turn goes on, and another API instance resumes the stream from Last-Event-ID', async () => {
    fx.vendor.reset();
    const agent = await fx.agent({}, 'Be brief.');
    const answer = 'one two three four five';
    fx.vendor.script({ reply: { text: answer }, hold: true });
    const worker = await startInProcessWorker(env);
    const port = await freePort();
    const apiChild = spawn(process.execPath, ['--import', 'tsx', 'api/server.ts'], {
      env: { ...process.env, ...env, PORT: String(port), LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    apiChild.stdout.on('data', (c: Buffer) => (out += c.toString()));
    apiChild.stderr.on('data', (c: Buffer) => (out += c.toString()));
    let other: TestApi | undefined;
    try {
      await waitFor(
        () => (out.includes('api listening') ? true : undefined),
        60_000,
        `the API child (${out})`,
      );
      const seen: SseEvent[] = [];
      const firstStream = readSse(
        `http://127.0.0.1:${port}${CONVERSE}?project_id=${fx.projectId}`,
        { method: 'POST', body: { agent_id: agent.id, message: 'count', stream: true } },
        (ev) => seen.push(ev),
      ).catch((err: unknown) => err);
      await fx.vendor.whenHeld();
      await waitFor(
        () => (seen.some((e) => e.event === 'message.delta') ? true : undefined),
        20_000,
        'the first delta',
      );
      await killHard(apiChild);
      expect(await firstStream).toBeInstanceOf(Error);
      // The API is gone; the model finishes its answer anyway.
      fx.vendor.release();
      const runId = (seen[0]!.data as { run_id: string }).run_id;
      other = await startTestApi(env);
      const lastId = seen.at(-1)!.id;
      const rest = await readSse(`${other.url}/api/agent-server/runs/${runId}/events`, {
        headers: { 'last-event-id': String(lastId) },
      });
      const all = [...seen, ...rest];
      expect(all.map((e) => e.id)).toEqual(all.map((_, i) => i + 1));
      expect(streamedText(all, 1)).toBe(answer);
      expect(all.at(-1)!.event).toBe('run.completed');
      const run = await other.request<{ status: string; output: { content: string } }>(
        'GET',
        `/api/agent-server/runs/${runId}`,
      );
      expect(run.body.data).toMatchObject({ status: 'completed', output: { content: answer } });
      expect(fx.vendor.received).toHaveLength(1);
    } finally {
      fx.vendor.release();
      await killHard(apiChild);
      await other?.close();
      await worker.stop();
    }
  });
});
