/**
 * An eval's cases: what it replays (a recorded conversation's turns, fixed
 * as run ids when the eval starts, or a dataset's rows), what each turn is
 * asked and compared with, and where it is answered.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { DbEval, EvalCase, EvalOriginal } from '../../core/db/tables/evals.js';
import type { EvalsRepository } from '../../core/repositories/evals.repository.js';

/** What a turn is asked and compared with, and the recorded turn's figures. */
export interface TurnSource {
  key: string;
  input: unknown;
  context: Record<string, unknown>;
  expected: unknown;
  original: EvalOriginal | null;
  sourceRunId: string | null;
}

/** The eval's agent; an eval whose agent was deleted cannot go on (its turns would have no one to answer). */
export function agentOf(ev: DbEval): string {
  if (!ev.agent_id) throw ApplicationFailure.nonRetryable("the eval's agent was deleted", 'agent_deleted');
  return ev.agent_id;
}

export async function planCases(repo: EvalsRepository, ev: DbEval): Promise<EvalCase[]> {
  if (ev.dataset_id) return (await repo.datasetRows(ev.dataset_id)).map((r) => ({ key: r.id, turns: 1 }));
  const cases: EvalCase[] = [];
  for (const id of ev.conversation_ids ?? []) {
    const turns = await repo.recordedTurns(ev.project_id, agentOf(ev), id);
    cases.push({ key: id, turns: turns.length, run_ids: turns.map((t) => t.run_id) });
  }
  return cases;
}

/**
 * What the turn replays: a dataset row (a case without recorded runs) or a
 * recorded turn; a string saying what is gone when it was deleted since the
 * eval started (the turn is then written as failed, `source_missing`).
 */
export async function turnSource(
  repo: EvalsRepository,
  ev: DbEval,
  c: EvalCase,
  turn: number,
): Promise<TurnSource | string> {
  if (!c.run_ids) {
    const row = await repo.datasetRow(c.key);
    if (!row) return `dataset row ${c.key} no longer exists`;
    return {
      key: c.key,
      input: row.input,
      context: row.context ?? {},
      expected: row.expected_output,
      original: null,
      sourceRunId: null,
    };
  }
  const runId = c.run_ids[turn];
  const [rec, context] = await Promise.all([
    runId ? repo.recordedTurn(runId) : undefined,
    repo.conversationContext(ev.project_id, c.key),
  ]);
  if (!rec) return `the recorded turn ${turn + 1} of conversation "${c.key}" no longer exists`;
  return {
    key: c.key,
    input: rec.input,
    context,
    expected: rec.output,
    original: {
      run_id: rec.run_id,
      output: rec.output,
      input_tokens: rec.input_tokens,
      output_tokens: rec.output_tokens,
      cost_usd: rec.cost_usd,
      latency_ms: rec.latency_ms,
    },
    sourceRunId: rec.run_id,
  };
}
