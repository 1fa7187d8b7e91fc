/**
 * Which turn an activity of a session (or of a sub-agent call) works for, for its spans
 * (core/telemetry/temporal.ts runs each activity in its turn's context): the
 * run id every session activity takes first (alone or as `runId`), looked up
 * once per run and kept a minute — the project's `record_content` as it was
 * when the turn's first activity ran applies to the whole turn.
 */
import type { Db } from '../../core/db/knex.js';
import { ProjectsRepository } from '../../core/repositories/projects.repository.js';
import type { ActivityCall, TurnOfActivity } from '../../core/telemetry/temporal.js';
import type { TurnScope } from '../../core/telemetry/turn-context.js';
import { agentOfSessionWorkflowId } from '../../temporal.config.js';
import { SESSION_WORKFLOW_TYPE } from '../../workflows/session.definitions.js';
import { SUB_AGENT_CALL_WORKFLOW_TYPE } from '../../workflows/sub-agent-call.definitions.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const KEEP_MS = 60_000;
const MAX_RUNS = 2_000;

function runIdOf(call: ActivityCall): string | undefined {
  const first = call.args[0];
  // A sub-agent call's activities work for the calling turn.
  const id =
    call.workflowType === SUB_AGENT_CALL_WORKFLOW_TYPE
      ? (first as { parentRunId?: unknown } | null)?.parentRunId
      : call.workflowType !== SESSION_WORKFLOW_TYPE
        ? undefined
        : typeof first === 'string'
          ? first
          : (first as { runId?: unknown } | null)?.runId;
  return typeof id === 'string' && UUID.test(id) ? id : undefined;
}

export function sessionTurnOf(db: Db): TurnOfActivity {
  const projects = new ProjectsRepository(db);
  const known = new Map<string, { turn: TurnScope | undefined; at: number }>();
  return async (call) => {
    const runId = runIdOf(call);
    if (!runId) return undefined;
    const hit = known.get(runId);
    if (hit && Date.now() - hit.at < KEEP_MS) return hit.turn;
    const row = await projects.turnOfRun(runId);
    const agentId =
      row?.agent_id ?? (call.workflowId ? agentOfSessionWorkflowId(call.workflowId) : undefined);
    const turn =
      row && agentId
        ? {
            projectId: row.project_id,
            agentId,
            conversationId: row.conversation_id,
            recordContent: row.record_content,
          }
        : undefined;
    if (known.size >= MAX_RUNS) known.delete(known.keys().next().value!);
    known.set(runId, { turn, at: Date.now() });
    return turn;
  };
}
