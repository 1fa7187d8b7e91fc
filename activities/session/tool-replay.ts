/**
 * Tool calls of an eval's replayed run (runs.replay set): answered from the
 * recorded run's calls when the variant calls the same tool with the same
 * arguments (JSON deep-equal, keys sorted), with no side effect. Any other
 * call has diverged: the turn fails with the non-retryable `replay_diverged`
 * (its ordinary failure path records it), and the eval stops replaying that
 * conversation. A diverged sandbox command runs instead when the eval allows
 * it (`execute_diverged_tools`); a diverged MCP call never does.
 */
import type { Db } from '../../core/db/knex.js';
import type { DbRun } from '../../core/db/tables/index.js';
import { sameArguments } from '../../core/evals/compare.js';
import {
  EvalsRepository,
  type RecordedToolCall,
  type RunReplay,
} from '../../core/repositories/evals.repository.js';
import { nonRetryable } from './failures.js';

export type ReplayAnswer =
  /** Not a replayed run: call the tool as usual. */
  | { kind: 'live' }
  /** Diverged, and the eval lets this (sandbox) call run for real. */
  | { kind: 'execute' }
  | { kind: 'recorded'; output: string; is_error: boolean };

function replayOf(run: DbRun): RunReplay | null {
  return (run as DbRun & { replay?: RunReplay | null }).replay ?? null;
}

/** Whether the run is an eval's replay (its tool calls answered from a recording). */
export function isReplay(run: DbRun): boolean {
  return replayOf(run) !== null;
}

/** Why a call diverged: the tool was never called in the recording, or with other arguments. */
function divergence(recorded: RecordedToolCall[], name: string, args: string): string {
  const same = recorded.filter((c) => c.name === name);
  if (!same.length) return `the recorded turn never called "${name}"`;
  return `the recorded turn called "${name}" with other arguments (${same.map((c) => c.arguments).join('; ')}), not ${args}`;
}

/**
 * How the run's call is answered. The first recorded call of the tool with
 * the same arguments answers it (a turn calling a tool twice alike got the
 * same recorded answer twice; the recording has no ordering to keep beyond that).
 */
export async function replayAnswer(
  db: Db,
  run: DbRun,
  call: { name: string; arguments: string },
  sandbox: boolean,
): Promise<ReplayAnswer> {
  const replay = replayOf(run);
  if (!replay) return { kind: 'live' };
  const recorded = replay.source_run_id
    ? await new EvalsRepository(db).recordedToolCalls(replay.source_run_id)
    : [];
  const match = recorded.find((c) => c.name === call.name && sameArguments(c.arguments, call.arguments));
  if (match) return { kind: 'recorded', output: match.output, is_error: match.is_error };
  if (sandbox && replay.execute_diverged_tools) return { kind: 'execute' };
  const why = replay.source_run_id
    ? divergence(recorded, call.name, call.arguments)
    : 'a dataset row has no recorded tool calls';
  throw nonRetryable('replay_diverged', `tool call "${call.name}" diverged from the recording: ${why}`, {
    tool: call.name,
    arguments: call.arguments,
  });
}
