/**
 * The questions an MCP server asks during one tool call (`elicitation/create`).
 * The first asking of a question records it and pauses the run
 * (`awaiting_input`); the call waits connected for the answer (any replica's
 * POST /runs/{id}/input lands in the question's row) for MCP_INPUT_HOLD_MS
 * (less when the call's own timeout or the answer's deadline comes first),
 * then stops: the session workflow waits instead (for days if need be) and
 * makes the call again, and the server's repeated question is answered at
 * once from the stored answer. So a worker restart mid-wait loses nothing.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/client';
import type { Db } from '../../core/db/knex.js';
import type { InputRound, StoredInputAnswer } from '../../core/db/tables/index.js';
import type { ElicitHandler, InputRoundAsked, InputRounds } from '../../core/mcp/mcp-client.js';
import {
  RunInputRequestsRepository,
  type QuestionPlace,
} from '../../core/repositories/run-input-requests.repository.js';
import type { InputAnswer } from '../../workflows/session.definitions.js';
import { recordPause, recordResume } from './run-waits.js';

const POLL_MS = 250;
/** The call stops waiting this long before its own timeout would end it (and the model hear "timed out"). */
const CALL_TIMEOUT_MARGIN_MS = 1_000;

/** The question the call stopped waiting for: the session waits for its answer. */
export interface ReleasedQuestion {
  seq: number;
  details: Record<string, unknown>;
  /** When the question is declined unanswered (epoch ms): the session waits until then, not a timeout more. */
  timeoutAt: number;
}

export interface QuestionsOptions {
  db: Db;
  runId: string;
  step: number;
  callId: string;
  /** The call as the run's pause shows it beside the question. */
  call: { name: string; server?: string; tool?: string };
  /** Answers the session holds, by the question's place (1-based seq at index seq-1). */
  inputs: ReadonlyArray<InputAnswer | null | undefined>;
  holdMs: number;
  /** When the call's own timeout (MCP_TOOL_TIMEOUT_MS) would end it, epoch ms: the wait ends before. */
  callDeadline: number;
  timeoutMs: number;
  /** Aborted when the call is cancelled. */
  signal: AbortSignal;
}

/** What the run's pause shows of a question. */
function questionDetails(params: ElicitRequest['params'], o: QuestionsOptions, seq: number) {
  const p = params as Record<string, unknown>;
  return {
    call_id: o.callId,
    step: o.step,
    seq,
    name: o.call.name,
    server: o.call.server,
    tool: o.call.tool,
    mode: (p.mode as string | undefined) ?? 'form',
    message: p.message,
    ...(p.requestedSchema ? { requested_schema: p.requestedSchema } : {}),
    ...(p.url ? { url: p.url } : {}),
    ...(p.elicitationId ? { elicitation_id: p.elicitationId } : {}),
  };
}

function asResult(answer: StoredInputAnswer): ElicitResult {
  return answer.action === 'accept' && answer.content
    ? { action: 'accept', content: answer.content as ElicitResult['content'] }
    : { action: answer.action };
}

/**
 * One call's question handler. `released` is set (and `stop` aborted) when
 * the call stops waiting for an answer; the caller then returns
 * `awaiting_input` for that question.
 */
export class CallQuestions implements InputRounds {
  private seq = 0;
  /** The rounds of `input_required` results this call has had (2026-07-28 servers). */
  private round = 0;
  released: ReleasedQuestion | undefined;
  /** Aborted when a question is released: the call is stopped. */
  readonly stop = new AbortController();
  private readonly repo: RunInputRequestsRepository;

  constructor(private readonly o: QuestionsOptions) {
    this.repo = new RunInputRequestsRepository(o.db);
  }

  /** A 2025-era server's question (`elicitation/create`). */
  readonly handle: ElicitHandler = (params) => this.ask(params);

  /**
   * The last round this call's server asked, when each of its questions has
   * an answer (given while no call waited, or held by the session): the call
   * resumes with them instead of starting over. Later questions number on.
   */
  async resume(): Promise<{ inputResponses: Record<string, unknown>; requestState?: string } | undefined> {
    const o = this.o;
    const asked = await this.repo.ofCall(o.runId, o.step, o.callId);
    const last = asked.filter((q) => q.round).at(-1)?.round;
    if (!last) return undefined;
    const inRound = asked.filter((q) => q.round?.round === last.round);
    const answers = inRound.map((q) => q.answer ?? o.inputs[q.seq - 1]);
    if (answers.some((a) => !a)) {
      // Not all answered: the call starts over, and the server's round asked again takes the same places.
      this.seq = inRound[0]!.seq - 1;
      this.round = last.round - 1;
      return undefined;
    }
    this.seq = inRound.at(-1)!.seq;
    this.round = last.round;
    const inputResponses: Record<string, unknown> = {};
    for (const [i, q] of inRound.entries()) {
      const answer = answers[i]!;
      if (!q.answer) await this.repo.answer(q.id, answer);
      await this.resumed(`${o.step}.input.${o.callId}.${q.seq}`, answer);
      inputResponses[q.round!.key] = asResult(answer);
    }
    return {
      inputResponses,
      ...(last.request_state !== undefined ? { requestState: last.request_state } : {}),
    };
  }

  /** A 2026-07-28 server's round of questions, answered in order (each as `ask` does). */
  async answer(asked: InputRoundAsked): Promise<Record<string, unknown>> {
    const round = ++this.round;
    const responses: Record<string, unknown> = {};
    for (const [key, request] of Object.entries(asked.inputRequests)) {
      if (request.method !== 'elicitation/create')
        throw new Error(`the server asked for ${request.method}, which this client does not offer`);
      const state = asked.requestState !== undefined ? { request_state: asked.requestState } : {};
      responses[key] = await this.ask(request.params as ElicitRequest['params'], { round, key, ...state });
    }
    return responses;
  }

  private async ask(params: ElicitRequest['params'], round?: InputRound): Promise<ElicitResult> {
    const seq = ++this.seq;
    const o = this.o;
    const place: QuestionPlace = { run_id: o.runId, step: o.step, call_id: o.callId, seq };
    const details = questionDetails(params, o, seq);
    const row = await this.repo.ensure(place, details, round);
    const key = `${o.step}.input.${o.callId}.${seq}`;
    if (row.answer) {
      // Answered while no call waited (its worker died): the run resumes here (a no-op once resumed).
      await this.resumed(key, row.answer);
      return asResult(row.answer);
    }
    const held = o.inputs[seq - 1];
    if (held) {
      await this.repo.answer(row.id, held);
      return asResult(held);
    }
    const timeoutAt = Date.now() + o.timeoutMs;
    await recordPause(o.db, { runId: o.runId, step: o.step, reason: 'input', details, timeoutAt, key });
    const answer = (await this.waitFor(row.id, timeoutAt)) ?? (await this.repo.release(row.id));
    if (answer) {
      await this.resumed(key, answer);
      return asResult(answer);
    }
    this.released = { seq, details, timeoutAt };
    const reason = new Error('the question waits for its answer; the call is made again with it');
    this.stop.abort(reason);
    // Not a person's decline: the server hears an error, and the call itself is cancelled.
    throw reason;
  }

  /** `run.resumed` by the person's answer, unless the run no longer waits for input. */
  private resumed(key: string, answer: StoredInputAnswer): Promise<void> {
    const { runId, step } = this.o;
    const details = { action: answer.action };
    return recordResume(this.o.db, { runId, step, reason: 'input', by: 'user', key, details });
  }

  /**
   * Polls the question's row until it has an answer, the hold ends (or the
   * call's timeout or the answer's deadline nears), or the call is cancelled.
   */
  private async waitFor(id: string, timeoutAt: number): Promise<StoredInputAnswer | null> {
    const until = Math.min(
      Date.now() + this.o.holdMs,
      this.o.callDeadline - CALL_TIMEOUT_MARGIN_MS,
      timeoutAt,
    );
    while (Date.now() < until && !this.o.signal.aborted) {
      const row = await this.repo.find(id);
      if (row?.answer) return row.answer;
      await sleep(POLL_MS, undefined, { signal: this.o.signal }).catch(() => undefined);
    }
    return null;
  }
}
