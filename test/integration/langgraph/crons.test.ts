/**
 * Crons through the official Agent Protocol client (`@langchain/langgraph-sdk`'s
 * `client.crons`), against the real API, PostgreSQL, the Temporal dev server
 * (one Schedule per cron) and an in-process worker: crons on a thread and
 * stateless ones, fired through their schedule (`trigger`), each firing one
 * turn answered by the scripted model; search, count, select; pause and
 * resume (through the protocol and our API); end_time; delete (the schedule
 * goes too), and the schedules of crons whose conversation or agent was
 * deleted; bad input answered 422 naming the field.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@langchain/langgraph-sdk';
import { ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../../../core/db/knex.js';
import { CronsRepository } from '../../../core/repositories/crons.repository.js';
import { databaseUrl, noTemporal } from '../../helpers/services.js';
import { lastUser } from '../evals/eval-harness.js';
import {
  sessionEnv,
  startFixture,
  useSessionWorld,
  waitFor,
  type Fixture,
  type RunData,
} from '../sessions/session-harness.js';

const skip = noTemporal();

interface HttpError {
  status: number;
  message: string;
}

async function refusal(call: Promise<unknown>): Promise<HttpError> {
  const err = (await call.then(
    () => undefined,
    (e: unknown) => e,
  )) as HttpError | undefined;
  if (!err) throw new Error('the call succeeded');
  return err;
}

const humanSays = (content: unknown) => ({ messages: [{ role: 'user', content }] });

describe.skipIf(skip)('Agent Protocol crons', () => {
  const world = useSessionWorld();
  // A turn held mid-answer by a failed test must not hold the worker's shutdown.
  afterEach(() => world.fx.vendor.release());
  const lg = () =>
    new Client({
      apiUrl: `${world.fx.api.url}/api/langgraph/${world.fx.projectId}`,
      callerOptions: { maxRetries: 0 },
    });
  const schedule = (cronId: string) => world.client.schedule.getHandle(`cron/${cronId}`);
  const scheduleGone = (cronId: string) =>
    schedule(cronId)
      .describe()
      .then(
        () => false,
        (err: unknown) => err instanceof ScheduleNotFoundError,
      );

  /** The model answers `answer: <last user message>`, whatever the order of requests. */
  function answering(): void {
    world.fx.vendor.respond = (body) => ({ reply: { text: `answer: ${lastUser(body)}` } });
  }

  async function conversationRuns(conversationId: string): Promise<RunData[]> {
    const res = await world.fx.api.request<RunData[]>(
      'GET',
      `/api/agent-server/conversations/${conversationId}/runs?project_id=${world.fx.projectId}`,
    );
    expect(res.status, res.text).toBe(200);
    return res.body.data;
  }

  /** A conversation with one finished turn (the thread a cron runs on). */
  async function thread(agentId: string): Promise<string> {
    const conversationId = `thread-${randomUUID()}`;
    const res = await world.fx.converse({
      agent_id: agentId,
      conversation_id: conversationId,
      message: 'hello',
    });
    expect(res.body.data.status, res.text).toBe('completed');
    return conversationId;
  }

  it('runs a turn of its thread each time its schedule fires, with the message of its input', async () => {
    answering();
    const agent = await world.fx.agent();
    const threadId = await thread(agent.id);
    const cron = await lg().crons.createForThread(threadId, agent.id, {
      schedule: '0 9 * * 1-5',
      timezone: 'Europe/Paris',
      input: humanSays([{ type: 'text', text: 'Morning report, please.' }]),
      metadata: { kind: 'report' },
    });
    expect(cron).toMatchObject({
      assistant_id: agent.id,
      thread_id: threadId,
      schedule: '0 9 * * 1-5',
      timezone: 'Europe/Paris',
      end_time: null,
      enabled: true,
      overlap_policy: 'skip',
      metadata: { kind: 'report' },
      user_id: null,
      payload: {
        assistant_id: agent.id,
        input: humanSays([{ type: 'text', text: 'Morning report, please.' }]),
      },
    });
    // The next firing is a weekday at 9:00 in Paris.
    const next = new Date(cron.next_run_date);
    expect(next.getTime()).toBeGreaterThan(Date.now());
    const paris = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Europe/Paris',
      hour: '2-digit',
      minute: '2-digit',
      weekday: 'short',
    }).format(next);
    expect(paris).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 09:00$/);

    // The schedule is the cron's: what it starts, in which time zone.
    const described = await schedule(cron.cron_id).describe();
    expect(described.spec.timezone).toBe('Europe/Paris');
    expect(described.action).toMatchObject({ type: 'startWorkflow', workflowType: 'cronTurnWorkflow' });
    expect(described.state.paused).toBe(false);

    await schedule(cron.cron_id).trigger();
    const runs = await waitFor(
      async () => {
        const all = await conversationRuns(threadId);
        return all.length === 2 && all.every((r) => r.status === 'completed') ? all : undefined;
      },
      30_000,
      'the cron’s turn',
    );
    const fired = runs.find((r) => r.output?.content === 'answer: Morning report, please.');
    expect(fired, JSON.stringify(runs)).toBeDefined();
    expect(fired!.thread_id).toBe(runs.find((r) => r !== fired)!.thread_id);
    // The cron's turn says where it came from; the turn before it was a converse turn.
    expect((fired as RunData & { source?: string }).source).toBe('cron');
    expect((runs.find((r) => r !== fired) as RunData & { source?: string }).source).toBe('rest');
    // A run of the Agent Protocol: listed on the thread with the cron's metadata.
    const listed = await lg().runs.list(threadId);
    expect(listed.find((r) => r.run_id === fired!.run_id)).toMatchObject({
      assistant_id: agent.id,
      status: 'success',
      metadata: { kind: 'report' },
    });
  });

  it('runs a stateless cron on a new conversation each firing, and takes the agent by name', async () => {
    answering();
    const agent = await world.fx.agent();
    const name = (await world.fx.api.request<{ name: string }>('GET', `/api/agent-server/agents/${agent.id}`))
      .body.data.name;
    const cron = await lg().crons.create(name, {
      schedule: '@daily',
      input: humanSays('Daily digest'),
      onRunCompleted: 'keep',
    });
    expect(cron).toMatchObject({
      assistant_id: agent.id,
      thread_id: null,
      timezone: 'UTC',
      on_run_completed: 'keep',
    });

    await schedule(cron.cron_id).trigger();
    const runs = await waitFor(
      async () => {
        const res = await world.fx.api.request<RunData[]>(
          'GET',
          `/api/agent-server/agents/${agent.id}/runs?project_id=${world.fx.projectId}`,
        );
        const done = res.body.data.filter((r) => r.status === 'completed');
        return done.length === 1 ? done : undefined;
      },
      30_000,
      'the stateless cron’s turn',
    );
    expect(runs[0]!.output?.content).toBe('answer: Daily digest');
    const conversation = await world.fx.api.request<{ namespace: string }>(
      'GET',
      `/api/agent-server/conversations/${runs[0]!.conversation_id}?project_id=${world.fx.projectId}`,
    );
    expect(conversation.body.data.namespace).toBe('cron');
  });

  it('deletes a stateless run’s thread once the run has ended, as the protocol does by default', async () => {
    answering();
    const agent = await world.fx.agent();
    const cron = await lg().crons.create(agent.id, { schedule: '@daily', input: humanSays('Throwaway') });
    expect(cron).toMatchObject({ thread_id: null, on_run_completed: 'delete' });
    const conversationsOf = async () =>
      (
        await world.fx.api.request<Array<{ id: string }>>(
          'GET',
          `/api/agent-server/conversations?project_id=${world.fx.projectId}&agent_id=${agent.id}`,
        )
      ).body.data;

    await schedule(cron.cron_id).trigger();
    // The run happened (the model answered it), then its conversation went.
    await waitFor(
      () => (world.fx.vendor.received.some((r) => lastUser(r.body) === 'Throwaway') ? true : undefined),
      30_000,
      'the stateless turn',
    );
    await waitFor(
      async () => ((await conversationsOf()).length === 0 ? true : undefined),
      30_000,
      'the thread’s deletion',
    );
  });

  it('searches, counts, selects and deletes crons; a deleted cron’s schedule is gone', async () => {
    const client = lg();
    const a = await world.fx.agent();
    const b = await world.fx.agent();
    const threadId = await thread(a.id);
    const onThread = await client.crons.createForThread(threadId, a.id, {
      schedule: '*/5 * * * *',
      input: humanSays('ping'),
      metadata: { team: 'red' },
    });
    const statelessA = await client.crons.create(a.id, {
      schedule: '0 * * * *',
      input: humanSays('tick'),
      metadata: { team: 'blue' },
    });
    const statelessB = await client.crons.create(b.id, { schedule: '0 0 * * *', input: humanSays('tock') });

    const ofA = await client.crons.search({ assistantId: a.id, sortBy: 'created_at', sortOrder: 'asc' });
    expect(ofA.map((c) => c.cron_id)).toEqual([onThread.cron_id, statelessA.cron_id]);
    expect((await client.crons.search({ threadId })).map((c) => c.cron_id)).toEqual([onThread.cron_id]);
    expect((await client.crons.search({ metadata: { team: 'blue' } })).map((c) => c.cron_id)).toEqual([
      statelessA.cron_id,
    ]);
    const page = await client.crons.search({ assistantId: a.id, sortOrder: 'asc', limit: 1, offset: 1 });
    expect(page.map((c) => c.cron_id)).toEqual([statelessA.cron_id]);
    const slim = await client.crons.search({ assistantId: b.id, select: ['cron_id', 'schedule'] });
    expect(slim).toEqual([{ cron_id: statelessB.cron_id, schedule: '0 0 * * *' }]);
    expect(await client.crons.search({ assistantId: 'no-such-agent' })).toEqual([]);

    expect(await client.crons.count({ assistantId: a.id })).toBe(2);
    expect(await client.crons.count({ threadId })).toBe(1);
    expect(await client.crons.count({ assistantId: b.id })).toBe(1);

    await client.crons.delete(statelessA.cron_id);
    expect(await client.crons.count({ assistantId: a.id })).toBe(1);
    expect(await scheduleGone(statelessA.cron_id)).toBe(true);
    expect(await scheduleGone(onThread.cron_id)).toBe(false);
    const again = await refusal(client.crons.delete(statelessA.cron_id));
    expect(again.status).toBe(404);
    expect(again.message).toContain('Cron not found');
  });

  it('pauses and resumes a cron through the protocol and through our API, its schedule with it', async () => {
    const client = lg();
    const agent = await world.fx.agent();
    const cron = await client.crons.create(agent.id, { schedule: '30 6 * * *', input: humanSays('wake up') });

    const paused = await client.crons.update(cron.cron_id, { enabled: false });
    expect(paused).toMatchObject({ enabled: false, next_run_date: null });
    expect((await schedule(cron.cron_id).describe()).state.paused).toBe(true);
    expect(await client.crons.search({ assistantId: agent.id, enabled: true })).toEqual([]);

    const resumed = await world.fx.api.request<{ paused: boolean; next_run_date: string | null }>(
      'POST',
      `/api/agent-server/crons/${cron.cron_id}/resume`,
    );
    expect(resumed.status, resumed.text).toBe(200);
    expect(resumed.body.data.paused).toBe(false);
    expect(resumed.body.data.next_run_date).not.toBeNull();
    expect((await schedule(cron.cron_id).describe()).state.paused).toBe(false);

    const pausedAgain = await world.fx.api.request<{ paused: boolean }>(
      'POST',
      `/api/agent-server/crons/${cron.cron_id}/pause?project_id=${world.fx.projectId}`,
    );
    expect(pausedAgain.body.data.paused).toBe(true);
    const listed = await world.fx.api.request<Array<{ id: string; paused: boolean; schedule_id: string }>>(
      'GET',
      `/api/agent-server/crons?project_id=${world.fx.projectId}&agent_id=${agent.id}`,
    );
    expect(listed.body.data).toEqual([
      expect.objectContaining({ id: cron.cron_id, paused: true, schedule_id: `cron/${cron.cron_id}` }),
    ]);
    const elsewhere = await world.fx.api.request(
      'GET',
      `/api/agent-server/crons/${cron.cron_id}?project_id=${randomUUID()}`,
    );
    expect(elsewhere.status).toBe(404);
    const noProject = await world.fx.api.request('GET', `/api/agent-server/crons?project_id=${randomUUID()}`);
    expect(noProject.status).toBe(404);
    const removed = await world.fx.api.request('DELETE', `/api/agent-server/crons/${cron.cron_id}`);
    expect(removed.status, removed.text).toBe(200);
    expect(await scheduleGone(cron.cron_id)).toBe(true);
    expect((await world.fx.api.request('GET', `/api/agent-server/crons/${cron.cron_id}`)).status).toBe(404);
    // A cron created disabled starts paused.
    const off = await client.crons.create(agent.id, {
      schedule: '@hourly',
      input: humanSays('x'),
      enabled: false,
    });
    expect((await schedule(off.cron_id).describe()).state.paused).toBe(true);
  });

  it('takes our overlap_policy, on create and on update, and an updated input is what the next firing sends', async () => {
    answering();
    const agent = await world.fx.agent();
    const raw = (method: string, path: string, body: unknown) =>
      fetch(`${world.fx.api.url}/api/langgraph/${world.fx.projectId}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const created = await raw('POST', '/runs/crons', {
      assistant_id: agent.id,
      schedule: '@weekly',
      input: humanSays('first'),
      overlap_policy: 'cancel_other',
      on_run_completed: 'keep',
    });
    expect(created.status).toBe(200);
    const cron = (await created.json()) as { cron_id: string; overlap_policy: string };
    expect(cron.overlap_policy).toBe('cancel_other');
    expect((await schedule(cron.cron_id).describe()).policies.overlap).toBe('CANCEL_OTHER');

    const bad = await raw('PATCH', `/runs/crons/${cron.cron_id}`, { overlap_policy: 'sometimes' });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(await bad.json())).toContain('overlap_policy');
    const updated = await raw('PATCH', `/runs/crons/${cron.cron_id}`, {
      overlap_policy: 'allow_all',
      input: { messages: [{ type: 'human', content: 'second' }] },
    });
    expect(updated.status).toBe(200);
    expect((await schedule(cron.cron_id).describe()).policies.overlap).toBe('ALLOW_ALL');

    await schedule(cron.cron_id).trigger();
    const [run] = await waitFor(
      async () => {
        const res = await world.fx.api.request<RunData[]>(
          'GET',
          `/api/agent-server/agents/${agent.id}/runs?project_id=${world.fx.projectId}`,
        );
        const done = res.body.data.filter((r) => r.status === 'completed');
        return done.length === 1 ? done : undefined;
      },
      30_000,
      'the firing after the update',
    );
    expect(run!.output?.content).toBe('answer: second');
  });

  it('under cancel_other, a firing while the previous turn still runs cancels that turn', async () => {
    const agent = await world.fx.agent();
    const threadId = `overlap-${randomUUID()}`;
    // On a thread made by a first turn, the first firing's answer held mid-stream by the model.
    answering();
    const first = await world.fx.converse({ agent_id: agent.id, conversation_id: threadId, message: 'hi' });
    expect(first.body.data.status).toBe('completed');
    const onThread = await lg().crons.createForThread(threadId, agent.id, {
      schedule: '@daily',
      input: humanSays('count for me'),
    });
    world.fx.vendor.script({ reply: { text: 'one two three four' }, hold: true });
    // A trigger takes the policy it is given (ALLOW_ALL when none), not the schedule's.
    await schedule(onThread.cron_id).trigger(ScheduleOverlapPolicy.CANCEL_OTHER);
    await world.fx.vendor.whenHeld();
    // A firing's workflow id holds its time to the second: the second firing must fall in a later one.
    await new Promise((r) => setTimeout(r, 1_100));
    await schedule(onThread.cron_id).trigger(ScheduleOverlapPolicy.CANCEL_OTHER);
    const runs = await waitFor(
      async () => {
        const all = (await conversationRuns(threadId)).filter((r) => r.run_id !== first.body.data.run_id);
        return all.length === 2 && all.every((r) => ['completed', 'cancelled'].includes(r.status))
          ? all
          : undefined;
      },
      30_000,
      'the second firing',
    );
    expect(runs.map((r) => r.status).sort()).toEqual(['cancelled', 'completed']);
    expect(runs.find((r) => r.status === 'completed')!.output?.content).toBe('answer: count for me');
  });

  it('stops at end_time, and an update moves or clears it', async () => {
    const client = lg();
    const agent = await world.fx.agent();
    const end = new Date(Date.now() + 3 * 3600_000);
    const cron = await client.crons.create(agent.id, {
      schedule: '0 0 1 1 *',
      input: humanSays('happy new year'),
      endTime: end.toISOString(),
    });
    // The next 1 January is after the end: no run is left.
    expect(cron.end_time).toBe(end.toISOString());
    expect(cron.next_run_date).toBeNull();
    expect((await schedule(cron.cron_id).describe()).spec.endAt?.toISOString()).toBe(end.toISOString());

    const cleared = await client.crons.update(cron.cron_id, { endTime: null, schedule: '@hourly' });
    expect(cleared).toMatchObject({ end_time: null, schedule: '@hourly' });
    expect(cleared.next_run_date).not.toBeNull();
    expect((await schedule(cron.cron_id).describe()).spec.endAt).toBeUndefined();
  });

  it('refuses bad input with 422 naming the field, and unknown threads and assistants with 404', async () => {
    const client = lg();
    const agent = await world.fx.agent();
    const tz = await refusal(
      client.crons.create(agent.id, {
        schedule: '@daily',
        timezone: 'Mars/Olympus_Mons',
        input: humanSays('x'),
      }),
    );
    expect(tz.status).toBe(422);
    expect(tz.message).toContain('timezone');
    const bad = await refusal(
      client.crons.create(agent.id, { schedule: 'every day', input: humanSays('x') }),
    );
    expect(bad.status).toBe(422);
    expect(bad.message).toContain('schedule');
    const outOfRange = await refusal(
      client.crons.create(agent.id, { schedule: '99 * * * *', input: humanSays('x') }),
    );
    expect(outOfRange.status).toBe(422);
    expect(outOfRange.message).toContain('schedule');
    const noText = await refusal(
      client.crons.create(agent.id, {
        schedule: '@daily',
        input: { messages: [{ role: 'ai', content: 'hi' }] },
      }),
    );
    expect(noText.status).toBe(422);
    expect(noText.message).toContain('input');
    const noThread = await refusal(
      client.crons.createForThread('no-such-thread', agent.id, { schedule: '@daily', input: humanSays('x') }),
    );
    expect(noThread.status).toBe(404);
    expect(noThread.message).toContain('Thread not found');
    const noAgent = await refusal(
      client.crons.create(randomUUID(), { schedule: '@daily', input: humanSays('x') }),
    );
    expect(noAgent.status).toBe(404);
    expect(noAgent.message).toContain('Assistant not found');
    // Nothing was left behind by the refused requests.
    expect(await client.crons.count({ assistantId: agent.id })).toBe(0);
  });

  it('deletes the schedules of crons whose conversation or agent is deleted', async () => {
    answering();
    const client = lg();
    const agent = await world.fx.agent();
    const threadId = await thread(agent.id);
    const onThread = await client.crons.createForThread(threadId, agent.id, {
      schedule: '@daily',
      input: humanSays('x'),
    });
    const del = await world.fx.api.request(
      'DELETE',
      `/api/agent-server/conversations/${threadId}?project_id=${world.fx.projectId}`,
    );
    expect(del.status, del.text).toBe(200);
    expect(await client.crons.count({ threadId })).toBe(0);
    expect(await scheduleGone(onThread.cron_id)).toBe(true);

    const stateless = await client.crons.create(agent.id, { schedule: '@daily', input: humanSays('y') });
    const gone = await world.fx.api.request('DELETE', `/api/agent-server/agents/${agent.id}`);
    expect(gone.status, gone.text).toBe(200);
    expect(await scheduleGone(stateless.cron_id)).toBe(true);
  });

  it('a schedule whose cron is gone (deleted by a path that could not reach Temporal) removes itself when it fires', async () => {
    const agent = await world.fx.agent();
    const cron = await lg().crons.create(agent.id, { schedule: '@daily', input: humanSays('z') });
    const db = createDb(databaseUrl());
    try {
      await new CronsRepository(db).delete(cron.cron_id);
    } finally {
      await db.destroy();
    }
    await schedule(cron.cron_id).trigger();
    await waitFor(
      async () => ((await scheduleGone(cron.cron_id)) ? true : undefined),
      30_000,
      'the schedule’s removal',
    );
    const runs = await world.fx.api.request<RunData[]>(
      'GET',
      `/api/agent-server/agents/${agent.id}/runs?project_id=${world.fx.projectId}`,
    );
    expect(runs.body.data).toEqual([]);
  });
});

describe('Agent Protocol crons without Temporal', () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await startFixture(sessionEnv({ TEMPORAL_ADDRESS: '127.0.0.1:1' }));
  });
  afterAll(async () => {
    await fx?.close();
  });

  it('answers 503 and keeps no cron when its schedule cannot be made', async () => {
    const client = new Client({
      apiUrl: `${fx.api.url}/api/langgraph/${fx.projectId}`,
      callerOptions: { maxRetries: 0 },
    });
    const agent = await fx.agent();
    const err = await refusal(client.crons.create(agent.id, { schedule: '@daily', input: humanSays('x') }));
    expect(err.status).toBe(503);
    expect(await client.crons.count({ assistantId: agent.id })).toBe(0);
  }, 120_000);
});
