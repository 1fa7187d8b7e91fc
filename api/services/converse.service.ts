import { createHash, randomUUID } from 'node:crypto';
import { context } from '@opentelemetry/api';
import {
  WithStartWorkflowOperation,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import {
  isTerminal,
  TERMINAL_EVENTS,
  type DbRun,
  type RunDoor,
  type RunSource,
  type RunOverrides,
  type RunProtocolRequest,
} from '../../core/db/tables/index.js';
import type { RunEvent } from '../../core/repositories/run-events.repository.js';
import {
  approvalUpdate,
  converseUpdate,
  SESSION_WORKFLOW_TYPE,
  sessionWorkflowId,
  type SessionInput,
} from '../../workflows/session.definitions.js';
import type { AppDeps } from '../deps.js';
import {
  ConflictError,
  isUniqueViolation,
  NotFoundError,
  ServiceUnavailableError,
  ValidationError,
} from '../../core/errors.js';
import type { ConverseBody, RunView } from '../schemas/converse.schemas.js';
import { alwaysKeep } from '../../core/telemetry/sampler.js';
import { RunsRepository, type ConverseLookup } from '../../core/repositories/runs.repository.js';
import type { RunEventsHub } from './run-events-hub.js';
import { RunsService } from './runs.service.js';
import { WebhooksRepository } from '../../core/repositories/webhooks.repository.js';
import { newWebhookSecret } from '../../core/webhooks/signing.js';

const SA = {
  ProjectId: defineSearchAttributeKey('ProjectId', SearchAttributeType.KEYWORD),
  AgentId: defineSearchAttributeKey('AgentId', SearchAttributeType.KEYWORD),
  ConversationId: defineSearchAttributeKey('ConversationId', SearchAttributeType.KEYWORD),
  Namespace: defineSearchAttributeKey('Namespace', SearchAttributeType.KEYWORD),
};

export { temporalUiUrl } from './runs.service.js';

/** Where a waiting caller stops: the run ended, or paused for approval. */
export const STOP_EVENTS: ReadonlySet<string> = new Set([...TERMINAL_EVENTS, 'run.paused']);

interface Accepted {
  run: DbRun;
  conversationId: string;
  namespace: string;
  agentName: string;
  /** The secret of the run's one-off webhook, when the request named one. */
  webhookSecret?: string;
}

/**
 * The converse flow: store the user message and its run first (unique per
 * conversation and message_id), then hand the run id to the session workflow
 * with update-with-start. Readers follow the run through its event log.
 */
export class ConverseService {
  private readonly runs: RunsRepository;
  private readonly views: RunsService;

  constructor(
    private readonly deps: AppDeps,
    private readonly hub: RunEventsHub,
  ) {
    this.runs = new RunsRepository(deps.db);
    this.views = new RunsService(deps.db, deps.config);
  }

  /**
   * `origin`: the door the message came through (default our own API), where
   * it came from (default `rest`, or `langgraph` for that door) and what its
   * client asked beside it; with `hold`, the run is stored but not
   * delivered (its caller delivers it later).
   */
  async submit(
    projectId: string,
    body: ConverseBody,
    traceId: string | undefined,
    origin?: { door?: RunDoor; source?: RunSource; protocol?: RunProtocolRequest; hold?: boolean },
  ): Promise<Accepted> {
    const { runs } = this;
    const conversationId = body.conversation_id ?? randomUUID();
    const messageId = body.message_id ?? randomUUID();
    const found = await runs.lookup(projectId, body.agent_id, conversationId, messageId);
    if (!found) throw new NotFoundError('project');
    const { agent } = found;
    if (!agent || agent.project_id !== projectId) throw new NotFoundError('agent');
    if (body.overrides) await this.checkOverrides(projectId, body.overrides);
    // Overrides are part of what was asked (left out when absent: earlier requests hash the same).
    const asked = {
      agent_id: agent.id,
      message: body.message,
      ...(body.overrides ? { overrides: body.overrides } : {}),
      ...(body.webhook ? { webhook: body.webhook } : {}),
    };
    const requestHash = createHash('sha256').update(JSON.stringify(asked)).digest('hex');
    let state: ConverseLookup | undefined = found;
    // Twice at most: a concurrent request may create the conversation or the message's run first.
    for (let attempt = 1; ; attempt++) {
      const namespace = state?.conversation?.namespace ?? body.namespace ?? 'default';
      if (body.namespace !== undefined && namespace !== body.namespace)
        throw new ConflictError({
          field: 'namespace',
          reason: `conversation "${conversationId}" belongs to namespace "${namespace}"`,
        });
      const existing = state?.run;
      if (existing) {
        if (existing.request_hash !== requestHash)
          throw new ConflictError({
            field: 'message_id',
            reason: 'this message_id was already used in the conversation for a different message',
          });
        const webhookSecret = await this.oneOffWebhook(existing, body.webhook);
        const result = { run: existing, conversationId, namespace, agentName: agent.name, webhookSecret };
        if (!isTerminal(existing.status) && !origin?.hold) await this.deliver(result);
        return result;
      }
      let run: DbRun | undefined;
      try {
        run = await runs.create({
          id: randomUUID(),
          project_id: projectId,
          conversation_id: conversationId,
          namespace,
          context: body.context,
          agent_id: agent.id,
          message_id: messageId,
          request_hash: requestHash,
          workflow_id: sessionWorkflowId(agent.id, conversationId),
          trace_id: traceId ?? null,
          content: body.message,
          overrides: body.overrides,
          end_user_id: body.end_user_id,
          ...(origin?.door ? { door: origin.door } : {}),
          ...(origin?.source ? { source: origin.source } : {}),
          ...(origin?.protocol ? { protocol: origin.protocol } : {}),
        });
      } catch (err) {
        // The agent (or project) was deleted since the read.
        if ((err as { code?: string }).code === '23503') throw new NotFoundError('agent');
        if (!isUniqueViolation(err) || attempt > 1) throw err;
      }
      if (run) {
        // Before the turn starts: its events must find the URL.
        const webhookSecret = await this.oneOffWebhook(run, body.webhook);
        const result = { run, conversationId, namespace, agentName: agent.name, webhookSecret };
        if (!origin?.hold) await this.deliver(result);
        return result;
      }
      if (attempt > 1) throw new Error(`could not store the message in conversation "${conversationId}"`);
      state = await runs.lookup(projectId, agent.id, conversationId, messageId);
    }
  }

  /**
   * The run's one-off webhook (`webhook`), with a secret made for it, stored
   * once: a retry of the message finds it and answers the same secret.
   */
  private async oneOffWebhook(run: DbRun, url: string | undefined): Promise<string | undefined> {
    if (!url) return undefined;
    const hooks = new WebhooksRepository(this.deps.db);
    const secret_enc = this.deps.secrets.encrypt(newWebhookSecret());
    await hooks.insertRunWebhook({ run_id: run.id, project_id: run.project_id, url, secret_enc });
    const stored = await hooks.findRunWebhook(run.id);
    return stored ? this.deps.secrets.decrypt(stored.secret_enc) : undefined;
  }

  /**
   * The ids of `overrides` must name a model (one with a provider, so the
   * turn can call it) and a prompt version (of any of its prompts) of the
   * request's project: a 400 naming the field otherwise.
   */
  private async checkOverrides(projectId: string, overrides: RunOverrides): Promise<void> {
    const modelId = overrides.model_id;
    const promptVersionId = overrides.prompt_version_id;
    if (!modelId && !promptVersionId) return;
    const found = await this.runs.overrideTargets(projectId, { modelId, promptVersionId });
    if (modelId && !found.model)
      throw ValidationError.field(
        'overrides.model_id',
        'overrides.model_id does not name an existing model in this project',
        'any.reference',
      );
    if (found.model && !found.model.provider_id)
      throw ValidationError.field(
        'overrides.model_id',
        `overrides.model_id names model "${found.model.name}", which has no provider to call`,
        'any.reference',
      );
    if (promptVersionId && !found.promptVersion)
      throw ValidationError.field(
        'overrides.prompt_version_id',
        'overrides.prompt_version_id does not name a version of a prompt of this project',
        'any.reference',
      );
  }

  /**
   * Update-with-start: the first message starts the session; the Update id is the message id.
   * Public for a caller that submitted with `hold` (it stores what the turn must find first).
   */
  async deliver({ run, conversationId, namespace, agentName }: Accepted): Promise<void> {
    const { config, temporal } = this.deps;
    const input: SessionInput = {
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
    try {
      // Accepted is enough: the turn's progress is read from the run's events. An agent
      // turn's trace is always stored: the Update's span says so to the workflow and its activities.
      await context.with(alwaysKeep(context.active()), () =>
        temporal.client.workflow.startUpdateWithStart(converseUpdate, {
          args: [{ runId: run.id }],
          updateId: run.message_id,
          waitForStage: 'ACCEPTED',
          startWorkflowOperation: new WithStartWorkflowOperation(SESSION_WORKFLOW_TYPE, {
            workflowId: run.workflow_id,
            taskQueue: config.temporalTaskQueue,
            args: [input],
            workflowIdConflictPolicy: 'USE_EXISTING',
            memo: { agent_name: agentName },
            typedSearchAttributes: [
              { key: SA.ProjectId, value: run.project_id },
              { key: SA.AgentId, value: run.agent_id! },
              { key: SA.ConversationId, value: conversationId },
              { key: SA.Namespace, value: namespace },
            ],
          }),
        }),
      );
    } catch (err) {
      this.deps.logger.error({ err, runId: run.id }, 'could not deliver the message to its session workflow');
      throw new ServiceUnavailableError({
        temporal: 'the session workflow could not be reached; send the same message_id again to retry',
        run_id: run.id,
      });
    }
  }

  /** The run's events after `afterSeq` until its end (or the signal). */
  events(runId: string, afterSeq: number, signal: AbortSignal): AsyncGenerator<RunEvent> {
    return this.hub.events(runId, afterSeq, signal);
  }

  /**
   * Waits for the run's end or its pause for approval (after event `afterSeq`
   * when given), at most `timeoutMs`; then the run as it stands.
   */
  async wait(runId: string, timeoutMs: number, afterSeq?: number): Promise<void> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      // Only the last events matter; start near the end of what is already written.
      const run = await this.runs.findById(runId);
      if (!run || isTerminal(run.status)) return;
      if (afterSeq === undefined && run.status.startsWith('awaiting_')) return;
      const from = afterSeq ?? Math.max(0, run.last_event_seq - 1);
      for await (const ev of this.hub.events(runId, from, controller.signal))
        if (STOP_EVENTS.has(ev.type)) return;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A person's decision on a paused run's tool calls, delivered to its
   * session workflow as an Update: refused (409) unless the run is paused on
   * exactly those undecided calls. Returns the stored decisions' outcome.
   */
  async approve(
    runId: string,
    projectId: string | undefined,
    body: { approved_call_ids: string[]; rejected_call_ids: string[] },
  ): Promise<{ status: 'running' | 'awaiting_approval'; pending_call_ids: string[]; afterSeq: number }> {
    const run = await this.runs.findById(runId);
    if (!run || (projectId !== undefined && run.project_id !== projectId)) throw new NotFoundError('run');
    const ids = [...body.approved_call_ids, ...body.rejected_call_ids];
    if (ids.length === 0)
      throw ValidationError.field(
        'approved_call_ids',
        'give at least one call id in approved_call_ids or rejected_call_ids',
        'array.min',
      );
    const both = body.approved_call_ids.filter((id) => body.rejected_call_ids.includes(id));
    if (both.length)
      throw ValidationError.field(
        'rejected_call_ids',
        `call ${both.join(', ')} is both approved and rejected`,
        'array.unique',
      );
    if (run.status !== 'awaiting_approval')
      throw new ConflictError({
        status: run.status,
        reason: `the run is not awaiting approval (status: ${run.status})`,
      });
    const pending = (run.pending_approvals ?? []).map((p) => String(p.id));
    for (const [field, list] of [
      ['approved_call_ids', body.approved_call_ids],
      ['rejected_call_ids', body.rejected_call_ids],
    ] as const) {
      const unknown = list.filter((id) => !pending.includes(id));
      if (unknown.length)
        throw ValidationError.field(
          field,
          `${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not awaiting approval (pending: ${pending.join(', ') || 'none'})`,
          'any.only',
        );
    }
    const handle = this.deps.temporal.client.workflow.getHandle(run.workflow_id);
    try {
      const result = await handle.executeUpdate(approvalUpdate, {
        args: [
          { runId, approved_call_ids: body.approved_call_ids, rejected_call_ids: body.rejected_call_ids },
        ],
      });
      return { ...result, afterSeq: run.last_event_seq };
    } catch (err) {
      // The validator refused: decided meanwhile by someone else, or the turn moved on.
      if (err instanceof WorkflowUpdateFailedError)
        throw new ConflictError({ reason: err.cause?.message ?? err.message });
      if (err instanceof WorkflowNotFoundError)
        throw new ConflictError({ reason: 'the session is no longer running' });
      this.deps.logger.error({ err, runId }, 'could not deliver an approval to its session workflow');
      throw new ServiceUnavailableError({ temporal: 'the session workflow could not be reached; try again' });
    }
  }

  view(runId: string, projectId?: string): Promise<RunView> {
    return this.views.view(runId, projectId);
  }
}
