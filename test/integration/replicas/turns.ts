/**
 * Streaming clients for the replica proof: a turn is started with POST
 * /converse (stream) on one API; when its stream breaks before the run's last
 * event, the client reconnects to a live API with GET /runs/:id/events and
 * `Last-Event-ID`, as a browser's EventSource would.
 */
import { performance } from 'node:perf_hooks';
import type { Db } from '../../../core/db/knex.js';
import { CONVERSE, readSse, type SseEvent } from '../sessions/session-harness.js';
import { call } from './cluster.js';

const TERMINAL = new Set(['run.completed', 'run.failed', 'run.cancelled']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Turn {
  index: number;
  runId?: string;
  events: SseEvent[];
  /** Streams opened after the first broke. */
  reconnects: number;
  /** performance.now() of the terminal event. */
  endedAt?: number;
  error?: string;
  /** URLs of the API each stream was read from, in order. */
  servedBy: string[];
}

/** Text of step `step`'s answer as a reader sees it (a `message.restarted` drops the step's text so far). */
export function streamedText(events: SseEvent[], step = 1): string {
  let text = '';
  for (const e of events) {
    if (e.data.step !== step) continue;
    if (e.event === 'message.restarted') text = '';
    if (e.event === 'message.delta') text += e.data.text as string;
  }
  return text;
}

export function hasDelta(t: Turn): boolean {
  return t.events.some((e) => e.event === 'message.delta');
}

/**
 * Runs one turn to its end: `first` is the API the client starts on, `live()`
 * the APIs it may reconnect to. Never throws: failures are in `error`.
 */
export function startTurn(opts: {
  index: number;
  first: string;
  live: () => string[];
  projectId: string;
  agentId: string;
  message: string;
  timeoutMs: number;
}): { turn: Turn; done: Promise<Turn> } {
  const turn: Turn = { index: opts.index, events: [], reconnects: 0, servedBy: [] };
  const push = (ev: SseEvent) => {
    turn.events.push(ev);
    if (!turn.runId && typeof ev.data?.run_id === 'string') turn.runId = ev.data.run_id;
    if (TERMINAL.has(ev.event)) turn.endedAt = performance.now();
  };
  const ended = () => TERMINAL.has(turn.events.at(-1)?.event ?? '');
  const done = (async () => {
    const deadline = Date.now() + opts.timeoutMs;
    turn.servedBy.push(opts.first);
    await readSse(
      `${opts.first}${CONVERSE}?project_id=${opts.projectId}`,
      { method: 'POST', body: { agent_id: opts.agentId, message: opts.message, stream: true } },
      push,
    ).catch(() => undefined);
    let attempt = 0;
    while (!ended()) {
      if (!turn.runId) {
        turn.error = 'the stream broke before the run id was known';
        break;
      }
      if (Date.now() > deadline) {
        turn.error = `not ended after ${opts.timeoutMs} ms`;
        break;
      }
      const urls = opts.live();
      if (urls.length === 0) {
        await sleep(200);
        continue;
      }
      const url = urls[attempt++ % urls.length]!;
      turn.reconnects++;
      turn.servedBy.push(url);
      const lastId = turn.events.at(-1)?.id ?? 0;
      const ok = await readSse(
        `${url}/api/agent-server/runs/${turn.runId}/events`,
        { headers: { 'last-event-id': String(lastId) } },
        push,
      ).then(
        () => true,
        () => false,
      );
      if (!ok) await sleep(250);
    }
    return turn;
  })();
  return { turn, done };
}

export interface Verdict {
  lost: number;
  duplicated: number;
  failed: number;
  restarted: number;
  problems: string[];
}

/**
 * Checks each turn as its reader and the database see it: event ids 1..n with
 * no gap or repeat, `run.completed` last, the answer's text once, and one user
 * and one assistant message in the turn's thread.
 */
export async function verify(turns: Turn[], answer: string, apiUrl: string, db: Db): Promise<Verdict> {
  const v: Verdict = { lost: 0, duplicated: 0, failed: 0, restarted: 0, problems: [] };
  for (const t of turns) {
    const ids = t.events.map((e) => e.id);
    const seen = new Set<number>();
    for (const id of ids) {
      if (seen.has(id)) {
        v.duplicated++;
        v.problems.push(`turn ${t.index}: event ${id} twice`);
      }
      seen.add(id);
    }
    const max = Math.max(0, ...ids);
    for (let id = 1; id <= max; id++)
      if (!seen.has(id)) {
        v.lost++;
        v.problems.push(`turn ${t.index}: event ${id} missing`);
      }
    if (t.events.some((e) => e.event === 'message.restarted')) v.restarted++;
    if (t.error || t.events.at(-1)?.event !== 'run.completed') {
      v.failed++;
      v.problems.push(`turn ${t.index}: ${t.error ?? `ended with ${t.events.at(-1)?.event}`}`);
      continue;
    }
    const text = streamedText(t.events);
    if (text !== answer) {
      if (text.length > answer.length) v.duplicated++;
      else v.lost++;
      v.problems.push(`turn ${t.index}: reader saw ${JSON.stringify(text.slice(0, 200))}`);
    }
    const run = await call<{ status: string; thread_id: string; output: { content: string } | null }>(
      apiUrl,
      'GET',
      `/api/agent-server/runs/${t.runId}`,
    );
    if (run.status !== 'completed' || run.output?.content !== answer) {
      v.failed++;
      v.problems.push(`turn ${t.index}: run ${run.status} ${JSON.stringify(run.output)}`);
    }
    const messages: Array<{ role: string }> = await db('messages')
      .where({ thread_id: run.thread_id })
      .orderBy('seq')
      .select('role');
    const users = messages.filter((m) => m.role === 'user').length;
    const assistants = messages.filter((m) => m.role === 'assistant').length;
    if (users !== 1 || assistants !== 1) {
      if (users > 1 || assistants > 1) v.duplicated++;
      else v.lost++;
      v.problems.push(`turn ${t.index}: messages ${messages.map((m) => m.role).join(',')}`);
    }
  }
  return v;
}

export function percentiles(values: number[]): { p50: number; max: number } {
  if (values.length === 0) return { p50: 0, max: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: sorted[Math.floor((sorted.length - 1) / 2)]!, max: sorted.at(-1)! };
}
