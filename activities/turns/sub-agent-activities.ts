/**
 * The activities of a sub-agent call (workflows/sub-agent-call.workflow.ts):
 * the sub-agent's run stored and handed to its session as a converse message
 * would be (storeTurnRun + deliverTurnRun, `source: sub_agent`), its answer
 * stored as the calling run's tool result, and a cancel passed on.
 *
 * Exactly once: the sub-agent's conversation id and message id are derived
 * from the calling run and the call's id, so a retried activity, or a
 * repeated child workflow, finds the run the first attempt stored, and the
 * session's Update (keyed by the message id) is the same Update.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { Client, WorkflowNotFoundError } from '@temporalio/client';
import { isTerminal, type DbRun } from '../../core/db/tables/index.js';
import { isForeignKeyViolation } from '../../core/errors.js';
import { AgentsRepository } from '../../core/repositories/agents.repository.js';
import { ConversationsRepository } from '../../core/repositories/conversations.repository.js';
import { RunEventsRepository } from '../../core/repositories/run-events.repository.js';
import { RunsRepository } from '../../core/repositories/runs.repository.js';
import { StepMessagesRepository } from '../../core/repositories/step-messages.repository.js';
import {
  SubAgentsRepository,
  type InheritedScope,
  type ParentRunRow,
} from '../../core/repositories/sub-agents.repository.js';
import { temporalClientInterceptors } from '../../core/telemetry/temporal.js';
import { cancelRunUpdate, type CancelAction } from '../../workflows/session.definitions.js';
import type { SubAgentCallInput, SubAgentStart } from '../../workflows/sub-agent-call.definitions.js';
import { parseArguments, type RunTools } from '../session/tools.js';
import { derivedUuid } from './cron-activities.js';
import { deliverTurnRun, storeTurnRun, TurnNotStoredError } from './session-delivery.js';
import type { TurnActivityDeps } from './turn-activities.js';

/** The namespace of the conversations sub-agent calls run in (one per call). */
export const SUB_AGENT_NAMESPACE = 'sub-agents';

/** The budgets a sub-agent's run counts against beside its own: its caller's, and the caller's callers'. */
function inheritedScopes(parent: ParentRunRow): InheritedScope[] {
  const scopes: InheritedScope[] = [
    ...(parent.agent_id ? [{ scope: 'agent' as const, scope_id: parent.agent_id }] : []),
    { scope: 'conversation', scope_id: parent.conversation_pk },
    ...(parent.budget_scopes ?? []),
  ];
  const seen = new Set<string>();
  return scopes.filter(
    (s) => !seen.has(`${s.scope}/${s.scope_id}`) && !!seen.add(`${s.scope}/${s.scope_id}`),
  );
}

/** What the calling model hears of the sub-agent's run. */
export function subAgentAnswer(run: DbRun | undefined): { output: string; isError: boolean } {
  if (!run) return { output: 'the sub-agent’s run no longer exists', isError: true };
  if (run.status === 'completed') {
    const structured = run.output?.structured;
    return {
      output: structured !== undefined ? JSON.stringify(structured) : (run.output?.content ?? ''),
      isError: false,
    };
  }
  if (run.status === 'cancelled') return { output: 'the sub-agent’s turn was cancelled', isError: true };
  return { output: `the sub-agent’s turn failed: ${run.error?.message ?? run.status}`, isError: true };
}

export function createSubAgentActivities(deps: TurnActivityDeps) {
  const repo = new SubAgentsRepository(deps.db);
  const runs = new RunsRepository(deps.db);
  const steps = new StepMessagesRepository(deps.db);
  const events = new RunEventsRepository(deps.db);
  const agents = new AgentsRepository(deps.db);
  const conversations = new ConversationsRepository(deps.db);
  let tracing: Client | undefined;

  /**
   * The worker's client, with the tracing interceptors: the sub-agent's
   * Update carries this activity's context, so its turn's spans are in the
   * calling turn's trace.
   */
  function client(): Client {
    if (!deps.temporal)
      throw ApplicationFailure.nonRetryable('the worker has no Temporal client', 'no_temporal_client');
    tracing ??= new Client({
      connection: deps.temporal.connection,
      namespace: deps.temporal.options.namespace,
      interceptors: temporalClientInterceptors(),
    });
    return tracing;
  }

  /** The call as the calling model made it, and the sub-agent its tool names. */
  async function callOf(parent: ParentRunRow, input: SubAgentCallInput) {
    const call = (await steps.toolCalls(input.parentRunId, input.step)).find((c) => c.id === input.callId);
    if (!call) return undefined;
    const offered = (parent.tools as RunTools | null)?.offered.find(
      (t) => t.name === call.name && t.kind === 'sub_agent',
    );
    return { call, agentId: offered?.agent_id };
  }

  /**
   * The caller's run is gone (its conversation deleted): the conversation an
   * earlier attempt stored for the call, never linked nor delivered, goes
   * too, so nothing of the call outlives the deletion.
   */
  async function refusedAsGone(conversationId: string): Promise<SubAgentStart> {
    for (const orphan of await conversations.findById(conversationId, undefined))
      if (orphan.namespace === SUB_AGENT_NAMESPACE) await conversations.deleteWithData(orphan);
    return { kind: 'refused', message: 'not run: the calling run no longer exists' };
  }

  return {
    /** Stores the sub-agent's run (once per call), linked to its caller, and hands it to its session. */
    async startSubAgentTurn(input: SubAgentCallInput): Promise<SubAgentStart> {
      const refused = (message: string): SubAgentStart => ({ kind: 'refused', message });
      const key = `${input.parentRunId}/${input.callId}`;
      const conversationId = derivedUuid(`sub-agent/${key}`);
      const parent = await repo.parent(input.parentRunId);
      if (!parent) return refusedAsGone(conversationId);
      const found = await callOf(parent, input);
      if (!found?.agentId)
        return refused(`not run: "${found?.call.name ?? input.callId}" is not a sub-agent`);
      const args = parseArguments(found.call);
      if (typeof args === 'string' || typeof args.message !== 'string') return refused(`not run: no message`);
      let stored;
      try {
        stored = await storeTurnRun(deps.db, {
          projectId: parent.project_id,
          agentId: found.agentId,
          conversationId,
          namespace: SUB_AGENT_NAMESPACE,
          messageId: `sub-agent/${key}`,
          content: args.message,
          context: parent.context ?? undefined,
          traceId: parent.trace_id,
          endUserId: parent.end_user_id,
          source: 'sub_agent',
        });
      } catch (err) {
        if (err instanceof TurnNotStoredError) return refused(`not run: ${err.message}`);
        throw err;
      }
      const { run, namespace } = stored;
      // Linked before it is delivered: its first model call holds against the callers' budgets too.
      try {
        await repo.link(run.id, input.parentRunId, inheritedScopes(parent));
      } catch (err) {
        // The caller's conversation was deleted meanwhile (its runs locked, then gone).
        if (isForeignKeyViolation(err)) return refusedAsGone(conversationId);
        throw err;
      }
      await events.append(
        input.parentRunId,
        'tool_call.started',
        {
          step: input.step,
          id: found.call.id,
          name: found.call.name,
          sub_agent: { agent_id: found.agentId, run_id: run.id, conversation_id: conversationId },
        },
        `${input.step}.tool.${found.call.id}.started`,
      );
      if (!isTerminal(run.status)) {
        const agent = await agents.findById(found.agentId);
        await deliverTurnRun({ config: deps.config, temporal: client() }, run, {
          conversationId,
          namespace,
          agentName: agent?.name ?? found.agentId,
        });
      }
      return { kind: 'started', runId: run.id };
    },

    /** The sub-agent's answer (or why there is none) as the calling run's tool result; once. */
    async answerSubAgentCall(
      args: SubAgentCallInput & { childRunId?: string; error?: string },
    ): Promise<void> {
      const parent = await repo.parent(args.parentRunId);
      if (!parent) return;
      const call = (await steps.toolCalls(args.parentRunId, args.step)).find((c) => c.id === args.callId);
      if (!call) return;
      const answer = args.error
        ? { output: args.error, isError: true }
        : subAgentAnswer(args.childRunId ? await runs.findById(args.childRunId) : undefined);
      await events.storeToolResult({
        runId: args.parentRunId,
        threadId: parent.thread_id,
        step: args.step,
        call: { id: call.id, name: call.name },
        output: answer.output,
        isError: answer.isError,
        ...(args.childRunId ? { details: { sub_agent_run_id: args.childRunId } } : {}),
      });
    },

    /** Cancels the sub-agent's run as its caller was cancelled; returns once it has ended. */
    async cancelSubAgentRun(args: { runId: string; action: CancelAction }): Promise<void> {
      const run = await runs.findById(args.runId);
      if (!run || isTerminal(run.status)) return;
      try {
        await client()
          .workflow.getHandle(run.workflow_id)
          .executeUpdate(cancelRunUpdate, { args: [{ runId: run.id, action: args.action }] });
      } catch (err) {
        // Its session is gone (terminated): nothing runs the turn any more.
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
    },
  };
}

export type SubAgentActivities = ReturnType<typeof createSubAgentActivities>;
