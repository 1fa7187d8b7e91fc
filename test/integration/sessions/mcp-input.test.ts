/**
 * Runs that wait for a person's answer to an MCP server's question
 * (elicitation): the server asks mid-call, the run pauses (`awaiting_input`)
 * showing the question, and POST /runs/{id}/input answers it. While the call
 * still waits connected the answer reaches it directly; once the call has
 * stopped waiting (MCP_INPUT_HOLD_MS, or before its own MCP_TOOL_TIMEOUT_MS)
 * the session workflow holds the wait, survives a worker restart, and calls
 * again, the server's repeated question answered from the stored answer; the
 * agent's input_timeout_ms declines. A worker that dies mid-wait leaves the
 * answer in the question for the call made again. Real Temporal, Postgres, a
 * real SDK-built MCP server, the scripted vendor.
 */
import { Client as LangGraphClient } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../core/db/knex.js';
import type { RunEventType } from '../../../core/db/tables/run-events.js';
import { sessionStateQuery } from '../../../workflows/session.definitions.js';
import { startAskingMcpServer } from '../../fixtures/mcp-servers.js';
import { uniqueName } from '../../helpers/factories.js';
import { databaseUrl, noTemporal } from '../../helpers/services.js';
import {
  killHard,
  sessionEnv,
  spawnWorker,
  startFixture,
  useSessionWorld,
  waitFor,
  type Fixture,
  type SessionWorld,
} from './session-harness.js';

type AskingServer = Awaited<ReturnType<typeof startAskingMcpServer>>;

interface Run {
  run_id: string;
  thread_id: string;
  workflow_id: string;
  status: string;
  output: { content: string } | null;
  pause: { reason: string; timeout_at: string | null; details: Record<string, unknown> } | null;
  tool_calls: Array<{ id: string; name: string; output?: string; is_error?: boolean }>;
}

/** The form the asking server's `book_seat` sends. */
const SEAT_SCHEMA = {
  type: 'object',
  properties: {
    seat: { type: 'string', description: 'Seat number, e.g. 12A' },
    meal: { type: 'string', enum: ['vegetarian', 'standard'], default: 'vegetarian' },
  },
  required: ['seat'],
};

/**
 * Helpers over one stack (`world` gives its fixture and, for sessionWaits, a
 * Temporal client): an agent using the asking server, runs, their events.
 */
function asking(
  world: () => Pick<SessionWorld, 'fx'> & Partial<Pick<SessionWorld, 'client'>>,
  db: () => Db,
  mcp: () => AskingServer,
) {
  const api = () => world().fx.api;
  const run = async (id: string) =>
    (await api().request<Run>('GET', `/api/agent-server/runs/${id}`)).body.data;
  return {
    run,
    until: (id: string, status: string, ms = 20_000) =>
      waitFor(async () => ((await run(id)).status === status ? run(id) : undefined), ms, `run ${status}`),
    answer: (id: string, body: Record<string, unknown>) =>
      api().request<Run>('POST', `/api/agent-server/runs/${id}/input`, body),
    events: (id: string, type: RunEventType): Promise<Array<{ data: Record<string, unknown> }>> =>
      db()('run_events').where({ run_id: id, type }).orderBy('seq').select('data'),
    /** The session workflow itself waits for the answer: the call has returned. */
    sessionWaits: (run: Run) =>
      waitFor(
        async () =>
          (await world().client!.workflow.getHandle(run.workflow_id).query(sessionStateQuery))
            .pending_step === 'awaiting_input',
        10_000,
        'the session to wait for input',
      ),
    /** An agent offered the asking server's tools, the model calling `tool` once and then saying `reply`. */
    async agent(tool: string, reply: string, fields: Record<string, unknown> = {}, endpoint = mcp().url) {
      const name = uniqueName('asking');
      const server = await api().request<{ id: string }>(
        'POST',
        `/api/agent-server/mcp-servers?project_id=${world().fx.projectId}`,
        { name, endpoint },
      );
      expect(server.status).toBe(200);
      world().fx.vendor.script(
        { reply: { tool_calls: [{ name: tool, arguments: {} }] } },
        { reply: { text: reply } },
      );
      const agent = await world().fx.agent({
        mcp_servers: [{ mcp_server_id: server.body.data.id }],
        ...fields,
      });
      return { ...agent, serverName: name };
    },
    async converse(agentId: string): Promise<Run> {
      const res = await world().fx.converse({ agent_id: agentId, message: 'book me a seat' });
      expect(res.status).toBe(200);
      return res.body.data as unknown as Run;
    },
  };
}

describe.skipIf(noTemporal())("runs waiting for a person's answer to an MCP server's question", () => {
  let db: Db;
  let mcp: AskingServer;
  beforeAll(async () => {
    db = createDb(databaseUrl());
    mcp = await startAskingMcpServer();
  });
  afterAll(async () => {
    await mcp?.stop();
    await db?.destroy();
  });
  beforeEach(() => {
    mcp.runs.clear();
    mcp.heard.length = 0;
  });

  describe('answered while the call waits connected', () => {
    const world = useSessionWorld();
    const h = asking(
      () => world,
      () => db,
      () => mcp,
    );

    it('pauses with the question; the answer (its default applied) reaches the waiting call', async () => {
      const agent = await h.agent('book_seat', 'booked');
      const waiting = await h.converse(agent.id);
      expect(waiting.status).toBe('awaiting_input');
      expect(waiting.pause).toMatchObject({
        reason: 'input',
        details: {
          name: 'book_seat',
          server: agent.serverName,
          tool: 'book_seat',
          seq: 1,
          mode: 'form',
          message: 'Which seat would you like?',
          requested_schema: SEAT_SCHEMA,
        },
      });
      expect(waiting.pause!.timeout_at).not.toBeNull();

      const answered = await h.answer(waiting.run_id, { action: 'accept', content: { seat: '12A' } });
      expect(answered.status).toBe(200);
      expect(answered.body.data.status).not.toBe('awaiting_input');
      const done = await h.until(waiting.run_id, 'completed');
      expect(done.output?.content).toBe('booked');
      expect(done.pause).toBeNull();
      expect(done.tool_calls[0]).toMatchObject({
        id: waiting.pause!.details.call_id,
        name: 'book_seat',
        is_error: false,
      });
      expect(JSON.parse(done.tool_calls[0]!.output!.replace(/^heard: /, ''))).toEqual({
        tool: 'book_seat',
        action: 'accept',
        content: { seat: '12A', meal: 'vegetarian' },
      });
      // The model's next request carries the tool's result.
      expect(JSON.stringify(world.fx.vendor.received.at(-1))).toContain('vegetarian');
      // Asked once, called once: the answer reached the call that asked.
      expect(mcp.runs.get('book_seat')).toBe(1);
      const paused = await h.events(waiting.run_id, 'run.paused');
      const resumed = await h.events(waiting.run_id, 'run.resumed');
      expect(paused.map((e) => e.data)).toEqual([
        expect.objectContaining({ status: 'awaiting_input', reason: 'input' }),
      ]);
      expect(resumed.map((e) => e.data)).toEqual([
        expect.objectContaining({ reason: 'input', by: 'user', action: 'accept' }),
      ]);
    });

    it('400 names the field an answer lacks; decline reaches the tool; 409 once nothing waits', async () => {
      const agent = await h.agent('book_seat', 'no seat then');
      const waiting = await h.converse(agent.id);
      expect(waiting.status).toBe('awaiting_input');

      const misfit = await h.answer(waiting.run_id, { action: 'accept', content: { meal: 'fish' } });
      expect(misfit.status).toBe(400);
      const fields = misfit.body.errorDetails.fields!.map((f) => f.field);
      expect(fields).toEqual(expect.arrayContaining(['content.seat', 'content.meal']));
      // Content goes with accept only.
      const stray = await h.answer(waiting.run_id, { action: 'decline', content: { seat: '1A' } });
      expect(stray.status).toBe(400);
      expect((await h.run(waiting.run_id)).status).toBe('awaiting_input');

      const declined = await h.answer(waiting.run_id, { action: 'decline' });
      expect(declined.status).toBe(200);
      const done = await h.until(waiting.run_id, 'completed');
      expect(done.output?.content).toBe('no seat then');
      expect(mcp.heard).toEqual([{ tool: 'book_seat', action: 'decline' }]);
      expect(done.tool_calls[0]!.output).toContain('"action":"decline"');

      const late = await h.answer(waiting.run_id, { action: 'accept', content: { seat: '3C' } });
      expect(late.status).toBe(409);
    });

    it('a URL-mode question shows the page to open; accept tells the server the person went', async () => {
      const agent = await h.agent('link_account', 'linked');
      const waiting = await h.converse(agent.id);
      expect(waiting.pause).toMatchObject({
        reason: 'input',
        details: {
          mode: 'url',
          url: 'https://accounts.example.test/link?state=abc',
          message: 'Link your account on this page',
          tool: 'link_account',
        },
      });
      expect(waiting.pause!.details).not.toHaveProperty('requested_schema');
      expect((await h.answer(waiting.run_id, { action: 'accept' })).status).toBe(200);
      const done = await h.until(waiting.run_id, 'completed');
      expect(done.output?.content).toBe('linked');
      expect(mcp.heard).toEqual([expect.objectContaining({ tool: 'link_account', action: 'accept' })]);
    });

    it('a run cancelled while its call waits connected ends cancelled; its question takes no answer', async () => {
      const agent = await h.agent('book_seat', 'never said');
      const waiting = await h.converse(agent.id);
      expect(waiting.status).toBe('awaiting_input');
      const cancelled = await world.fx.api.request<Run>(
        'POST',
        `/api/agent-server/runs/${waiting.run_id}/cancel`,
        {
          action: 'interrupt',
        },
      );
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.data).toMatchObject({ status: 'cancelled', pause: null });
      expect((await h.answer(waiting.run_id, { action: 'decline' })).status).toBe(409);
      expect(mcp.heard).toEqual([]);
    });

    it('the Agent Protocol shows the question as an interrupt; command.resume answers it', async () => {
      const agent = await h.agent('book_seat', 'booked through the protocol');
      const base = `${world.fx.api.url}/api/langgraph/${world.fx.projectId}`;
      const client = new LangGraphClient({ apiUrl: base });
      const thread = await client.threads.create();
      const paused = (await client.runs.wait(thread.thread_id, agent.id, {
        input: { messages: [{ type: 'human', content: 'book me a seat' }] },
      })) as { __interrupt__?: Array<{ value: Record<string, unknown> }> };
      expect(paused.__interrupt__?.[0]?.value).toMatchObject({
        reason: 'input',
        details: { mode: 'form', message: 'Which seat would you like?', requested_schema: SEAT_SCHEMA },
      });
      const state = await fetch(`${base}/threads/${thread.thread_id}/state`);
      expect(state.status).toBe(200);
      const body = (await state.json()) as {
        tasks: Array<{ interrupts: Array<{ value: { reason: string } }> }>;
      };
      expect(body.tasks[0]!.interrupts[0]!.value.reason).toBe('input');

      // An answer that does not fit is the protocol's 422, naming the field.
      const misfit = await fetch(`${base}/threads/${thread.thread_id}/runs/wait`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          assistant_id: agent.id,
          command: { resume: { action: 'accept', content: { meal: 'standard' } } },
        }),
      });
      expect(misfit.status).toBe(422);
      expect(await misfit.text()).toContain('content.seat');

      const resumed = (await client.runs.wait(thread.thread_id, agent.id, {
        command: { resume: { action: 'accept', content: { seat: '7F', meal: 'standard' } } },
      })) as { messages: Array<{ type: string; content: unknown }> };
      expect(resumed.messages.map((m) => m.type)).toEqual(['human', 'ai', 'tool', 'ai']);
      expect(resumed.messages[2]!.content).toContain('"seat":"7F"');
      expect(resumed.messages.at(-1)!.content).toBe('booked through the protocol');
      expect((await client.threads.get(thread.thread_id)).status).toBe('idle');
    });
  });

  describe('answered after the call stopped waiting', () => {
    // The call waits connected for half a second, then the session waits instead.
    const world = useSessionWorld({ MCP_INPUT_HOLD_MS: '500' });
    const h = asking(
      () => world,
      () => db,
      () => mcp,
    );

    it('survives a worker restart: the call is made again and the repeated question answered at once', async () => {
      const agent = await h.agent('book_seat', 'booked after all');
      const waiting = await h.converse(agent.id);
      expect(waiting.status).toBe('awaiting_input');
      await h.sessionWaits(waiting);
      expect((await h.run(waiting.run_id)).status).toBe('awaiting_input');
      const [question] = await db('run_input_requests').where({ run_id: waiting.run_id }).select('state');
      expect(question).toMatchObject({ state: 'released' });

      await world.stopWorker();
      await world.restartWorker();
      const answered = await h.answer(waiting.run_id, {
        action: 'accept',
        content: { seat: '1C', meal: 'standard' },
      });
      expect(answered.status).toBe(200);
      const done = await h.until(waiting.run_id, 'completed');
      expect(done.output?.content).toBe('booked after all');
      expect(done.tool_calls[0]!.output).toContain('"seat":"1C"');
      // The tool ran twice (the call that stopped waiting, the call made again); the person was asked once.
      expect(mcp.runs.get('book_seat')).toBe(2);
      expect(mcp.heard).toEqual([
        { tool: 'book_seat', action: 'accept', content: { seat: '1C', meal: 'standard' } },
      ]);
      expect(await h.events(waiting.run_id, 'run.paused')).toHaveLength(1);
      expect((await h.events(waiting.run_id, 'run.resumed')).map((e) => e.data)).toEqual([
        expect.objectContaining({ reason: 'input', by: 'user', action: 'accept' }),
      ]);
    });

    it('an answer given just as the call stops waiting reaches the session', async () => {
      // The call is slow to end its session with this server: it returns well after releasing its question.
      const slow = await startAskingMcpServer({ goodbyeDelayMs: 800 });
      try {
        const agent = await h.agent('book_seat', 'booked in time', {}, slow.url);
        const waiting = await h.converse(agent.id);
        const released = async () =>
          (await db('run_input_requests').where({ run_id: waiting.run_id }).first<{ state: string }>())
            ?.state === 'released' || undefined;
        await waitFor(released, 5_000, 'the call to release its question');
        const answered = await h.answer(waiting.run_id, { action: 'accept', content: { seat: '2B' } });
        expect(answered.status).toBe(200);
        const done = await h.until(waiting.run_id, 'completed');
        expect(done.output?.content).toBe('booked in time');
        expect(done.tool_calls[0]!.output).toContain('"seat":"2B"');
        expect(slow.runs.get('book_seat')).toBe(2);
      } finally {
        await slow.stop();
      }
    });

    it('a run cancelled while the session waits for the answer ends cancelled', async () => {
      const agent = await h.agent('book_seat', 'never said');
      const waiting = await h.converse(agent.id);
      await h.sessionWaits(waiting);
      const cancelled = await world.fx.api.request<Run>(
        'POST',
        `/api/agent-server/runs/${waiting.run_id}/cancel`,
        {
          action: 'interrupt',
        },
      );
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.data).toMatchObject({ status: 'cancelled', pause: null });
      expect((await h.answer(waiting.run_id, { action: 'accept', content: { seat: '4A' } })).status).toBe(
        409,
      );
      // Called once (the call that stopped waiting), never again.
      expect(mcp.runs.get('book_seat')).toBe(1);
    });

    it("declines when no answer comes within the agent's input_timeout_ms", async () => {
      const agent = await h.agent('book_seat', 'declined for you', { input_timeout_ms: 1_000 });
      const waiting = await h.converse(agent.id);
      expect(waiting.status).toBe('awaiting_input');
      expect(waiting.pause!.timeout_at).not.toBeNull();
      const done = await h.until(waiting.run_id, 'completed', 15_000);
      expect(done.output?.content).toBe('declined for you');
      expect(done.tool_calls[0]!.output).toContain('"action":"decline"');
      expect(mcp.heard).toEqual([{ tool: 'book_seat', action: 'decline' }]);
      expect((await h.events(waiting.run_id, 'run.resumed')).map((e) => e.data)).toEqual([
        expect.objectContaining({ reason: 'input', by: 'timeout', action: 'decline' }),
      ]);
      // Too late: the run no longer waits.
      expect((await h.answer(waiting.run_id, { action: 'decline' })).status).toBe(409);
    });
  });

  describe("a call whose own timeout comes before the hold's end", () => {
    // MCP_INPUT_HOLD_MS keeps its default (10 minutes); the call's own timeout is 2.5 s.
    const world = useSessionWorld({ MCP_TOOL_TIMEOUT_MS: '2500' });
    const h = asking(
      () => world,
      () => db,
      () => mcp,
    );

    it('stops waiting before it times out: the run keeps waiting, its deadline unchanged, and the answer is heard', async () => {
      const agent = await h.agent('book_seat', 'booked at last', { input_timeout_ms: 60_000 });
      const waiting = await h.converse(agent.id);
      expect(waiting.status).toBe('awaiting_input');
      await h.sessionWaits(waiting);
      const still = await h.run(waiting.run_id);
      expect(still.status).toBe('awaiting_input');
      // Not a "timed out" result for the model: the call has no result yet.
      expect(still.tool_calls[0]?.output).toBeUndefined();
      // The time the call waited connected counts toward input_timeout_ms.
      const moved = Date.parse(still.pause!.timeout_at!) - Date.parse(waiting.pause!.timeout_at!);
      expect(Math.abs(moved)).toBeLessThan(1_000);

      expect((await h.answer(waiting.run_id, { action: 'accept', content: { seat: '9D' } })).status).toBe(
        200,
      );
      const done = await h.until(waiting.run_id, 'completed');
      expect(done.output?.content).toBe('booked at last');
      expect(done.tool_calls[0]).toMatchObject({ is_error: false });
      expect(done.tool_calls[0]!.output).toContain('"seat":"9D"');
      expect(mcp.runs.get('book_seat')).toBe(2);
    });
  });

  describe('a worker that dies while its call waits connected', () => {
    // A dead worker's call is made again elsewhere within seconds.
    const env = sessionEnv({ SESSION_TOOL_HEARTBEAT_TIMEOUT_MS: '3000' });
    let fx: Fixture;
    beforeAll(async () => {
      fx = await startFixture(env);
    });
    afterAll(async () => {
      await fx?.close();
    });
    const h = asking(
      () => ({ fx }),
      () => db,
      () => mcp,
    );

    it('the answer waits in the question: the call made again on another worker takes it, and the run resumes', async () => {
      const doomed = await spawnWorker(env);
      let survivor: Awaited<ReturnType<typeof spawnWorker>> | undefined;
      try {
        const agent = await h.agent('book_seat', 'booked on another worker');
        const waiting = await h.converse(agent.id);
        expect(waiting.status).toBe('awaiting_input');
        survivor = await spawnWorker(env);
        await killHard(doomed.child);
        const answered = await h.answer(waiting.run_id, { action: 'accept', content: { seat: '5E' } });
        expect(answered.status).toBe(200);
        const done = await h.until(waiting.run_id, 'completed', 40_000);
        expect(done.output?.content).toBe('booked on another worker');
        expect(done.tool_calls[0]!.output).toContain('"seat":"5E"');
        expect(mcp.runs.get('book_seat')).toBe(2);
        expect(await h.events(waiting.run_id, 'run.paused')).toHaveLength(1);
        expect((await h.events(waiting.run_id, 'run.resumed')).map((e) => e.data)).toEqual([
          expect.objectContaining({ reason: 'input', by: 'user', action: 'accept' }),
        ]);
      } finally {
        await killHard(doomed.child);
        if (survivor) await killHard(survivor.child);
      }
    }, 60_000);
  });
});
