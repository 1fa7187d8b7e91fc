/**
 * A user turn started from the worker as converse starts it from the API:
 * the run stored once per (conversation, message id) with its user message
 * and `run.created`, then handed to its session workflow with
 * update-with-start (the Update's id is the message id, so a repeated
 * delivery is the same Update). Used by eval replays, crons and delayed turns.
 */
import { createHash, randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { Config } from '../../core/config.js';
import type { Db } from '../../core/db/knex.js';
import type {
  DbRun,
  RunDoor,
  RunOverrides,
  RunProtocolRequest,
  RunSource,
} from '../../core/db/tables/index.js';
import { isUniqueViolation } from '../../core/errors.js';
import { RunsRepository } from '../../core/repositories/runs.repository.js';
import {
  converseUpdate,
  SESSION_WORKFLOW_TYPE,
  sessionWorkflowId,
  type SessionInput,
} from '../../workflows/session.definitions.js';

const SA = {
  ProjectId: defineSearchAttributeKey('ProjectId', SearchAttributeType.KEYWORD),
  AgentId: defineSearchAttributeKey('AgentId', SearchAttributeType.KEYWORD),
  ConversationId: defineSearchAttributeKey('ConversationId', SearchAttributeType.KEYWORD),
  Namespace: defineSearchAttributeKey('Namespace', SearchAttributeType.KEYWORD),
};

/** One user message for an agent in a conversation, keyed by its message id. */
export interface TurnRequest {
  projectId: string;
  agentId: string;
  conversationId: string;
  /** For a new conversation; an existing one keeps its own. */
  namespace: string;
  messageId: string;
  /** The user message (a string or content parts). */
  content: unknown;
  context?: Record<string, unknown> | undefined;
  overrides?: RunOverrides | undefined;
  traceId?: string | null;
  /** The door the turn belongs to (default `api`) and what its client asked beside the message. */
  door?: RunDoor | undefined;
  /** The person the turn acts for (per-user MCP authorization). */
  endUserId?: string | null | undefined;
  /** Where the turn came from (default: `langgraph` for that door, else `rest`). */
  source?: RunSource | undefined;
  protocol?: RunProtocolRequest | undefined;
}

/** Thrown when the run cannot be stored: the agent, project or conversation is gone, or the message is another's. */
export class TurnNotStoredError extends Error {
  override name = 'TurnNotStoredError';
}

/** What converse hashes: the same message id with another message is a conflict, not a retry. */
export function turnRequestHash(
  agentId: string,
  content: unknown,
  overrides: RunOverrides | undefined,
): string {
  return createHash('sha256')
    .update(JSON.stringify({ agent_id: agentId, message: content, overrides }))
    .digest('hex');
}

export interface StoredTurn {
  run: DbRun;
  /** The conversation's namespace (an existing conversation keeps its own). */
  namespace: string;
}

/**
 * The turn's run: created once (the message id is its key); a repeated
 * request finds the run the first one made.
 */
export async function storeTurnRun(db: Db, t: TurnRequest): Promise<StoredTurn> {
  const runs = new RunsRepository(db);
  const requestHash = turnRequestHash(t.agentId, t.content, t.overrides);
  let namespace = t.namespace;
  for (let attempt = 1; attempt <= 2; attempt++) {
    try {
      const run = await runs.create({
        id: randomUUID(),
        project_id: t.projectId,
        conversation_id: t.conversationId,
        namespace,
        context: t.context,
        agent_id: t.agentId,
        message_id: t.messageId,
        request_hash: requestHash,
        workflow_id: sessionWorkflowId(t.agentId, t.conversationId),
        trace_id: t.traceId ?? null,
        content: t.content,
        overrides: t.overrides,
        ...(t.door ? { door: t.door } : {}),
        ...(t.source ? { source: t.source } : {}),
        ...(t.endUserId ? { end_user_id: t.endUserId } : {}),
        ...(t.protocol ? { protocol: t.protocol } : {}),
      });
      if (run) return { run, namespace };
    } catch (err) {
      if ((err as { code?: string }).code === '23503')
        throw new TurnNotStoredError(`agent ${t.agentId} or its project no longer exists`);
      if (!isUniqueViolation(err)) throw err;
    }
    const found = await runs.lookup(t.projectId, t.agentId, t.conversationId, t.messageId);
    if (found?.run) {
      if (found.run.request_hash !== requestHash)
        throw new TurnNotStoredError(`message id "${t.messageId}" was used for another message`);
      return { run: found.run, namespace: found.conversation?.namespace ?? namespace };
    }
    // The conversation is in another namespace: the run goes there.
    if (found?.conversation) namespace = found.conversation.namespace;
  }
  throw new TurnNotStoredError(`could not store the turn in conversation "${t.conversationId}"`);
}

/** Where a stored run goes: its session, and what the session is started with. */
export interface DeliveryTarget {
  conversationId: string;
  namespace: string;
  agentName: string;
}

function sessionInput(config: Config, run: DbRun, conversationId: string): SessionInput {
  return {
    projectId: run.project_id,
    agentId: run.agent_id!,
    conversationId,
    threadId: run.thread_id,
    settings: {
      idleTimeoutMs: config.session.idleTimeoutMs,
      continueAsNewAfterTurns: config.session.continueAsNewTurns,
      modelHeartbeatTimeoutMs: config.session.modelHeartbeatTimeoutMs,
      toolHeartbeatTimeoutMs: config.session.toolHeartbeatTimeoutMs,
    },
  };
}

/** Update-with-start: the first message starts the session; waits only for the Update's acceptance. */
export async function deliverTurnRun(
  deps: { config: Config; temporal: Client },
  run: DbRun,
  target: DeliveryTarget,
): Promise<void> {
  await deps.temporal.workflow.startUpdateWithStart(converseUpdate, {
    args: [{ runId: run.id }],
    updateId: run.message_id,
    waitForStage: 'ACCEPTED',
    startWorkflowOperation: new WithStartWorkflowOperation(SESSION_WORKFLOW_TYPE, {
      workflowId: run.workflow_id,
      taskQueue: deps.config.temporalTaskQueue,
      args: [sessionInput(deps.config, run, target.conversationId)],
      workflowIdConflictPolicy: 'USE_EXISTING',
      memo: { agent_name: target.agentName },
      typedSearchAttributes: [
        { key: SA.ProjectId, value: run.project_id },
        { key: SA.AgentId, value: run.agent_id! },
        { key: SA.ConversationId, value: target.conversationId },
        { key: SA.Namespace, value: target.namespace },
      ],
    }),
  });
}
