import {
  WithStartWorkflowOperation,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { isTerminal } from '../../core/db/tables/index.js';
import { ConflictError, NotFoundError, ServiceUnavailableError } from '../../core/errors.js';
import { RunsRepository, type RunWithConversation } from '../../core/repositories/runs.repository.js';
import {
  cancelRunUpdate,
  SESSION_WORKFLOW_TYPE,
  type CancelAction,
  type SessionInput,
} from '../../workflows/session.definitions.js';
import type { AppDeps } from '../deps.js';
import type { RunView } from '../schemas/runs.schemas.js';
import { RunsService } from './runs.service.js';

const keyword = (name: string) => defineSearchAttributeKey(name, SearchAttributeType.KEYWORD);
const SA = {
  ProjectId: keyword('ProjectId'),
  AgentId: keyword('AgentId'),
  ConversationId: keyword('ConversationId'),
  Namespace: keyword('Namespace'),
};

/**
 * POST /runs/{id}/cancel: the run's session workflow stops it in any state
 * (the cancelRun Update answers once the run has ended). A cancelled run
 * answers as it is; a run that completed or failed, before or during the
 * cancel, answers 409.
 */
export class RunCancelService {
  private readonly runs: RunsRepository;
  private readonly views: RunsService;

  constructor(private readonly deps: AppDeps) {
    this.runs = new RunsRepository(deps.db);
    this.views = new RunsService(deps.db, deps.config);
  }

  async cancel(runId: string, projectId: string | undefined, action: CancelAction): Promise<RunView> {
    const run = await this.runs.findWithConversation(runId);
    if (!run || (projectId !== undefined && run.project_id !== projectId)) throw new NotFoundError('run');
    if (!isTerminal(run.status)) await this.deliver(run, action);
    const view = await this.views.view(runId);
    if (view.status !== 'cancelled')
      throw new ConflictError({
        status: view.status,
        reason: `the run has already ended (status: ${view.status}); only a running or waiting run can be cancelled`,
      });
    return view;
  }

  /**
   * The cancelRun Update, waited for until the run has ended. A run whose
   * session is not running (terminated, or its message never delivered) is
   * closed by a session started for it, as the message would have started it.
   */
  private async deliver(run: RunWithConversation, action: CancelAction): Promise<void> {
    const args: [{ runId: string; action: CancelAction }] = [{ runId: run.id, action }];
    try {
      try {
        await this.deps.temporal.client.workflow
          .getHandle(run.workflow_id)
          .executeUpdate(cancelRunUpdate, { args });
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
        const handle = await this.deps.temporal.client.workflow.startUpdateWithStart(cancelRunUpdate, {
          args,
          waitForStage: 'ACCEPTED',
          startWorkflowOperation: this.sessionStart(run),
        });
        await handle.result();
      }
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError)
        throw new ConflictError({ reason: err.cause?.message ?? err.message });
      this.deps.logger.error({ err, runId: run.id }, 'could not deliver a cancel to its session workflow');
      throw new ServiceUnavailableError({ temporal: 'the session workflow could not be reached; try again' });
    }
  }

  /** The run's session, started as a converse message starts it. */
  private sessionStart(run: RunWithConversation) {
    const { config } = this.deps;
    const input: SessionInput = {
      projectId: run.project_id,
      agentId: run.agent_id ?? '',
      conversationId: run.conversation_client_id,
      threadId: run.thread_id,
      settings: {
        idleTimeoutMs: config.session.idleTimeoutMs,
        continueAsNewAfterTurns: config.session.continueAsNewTurns,
        modelHeartbeatTimeoutMs: config.session.modelHeartbeatTimeoutMs,
        toolHeartbeatTimeoutMs: config.session.toolHeartbeatTimeoutMs,
      },
    };
    return new WithStartWorkflowOperation(SESSION_WORKFLOW_TYPE, {
      workflowId: run.workflow_id,
      taskQueue: config.temporalTaskQueue,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      memo: { agent_name: run.agent_name },
      typedSearchAttributes: [
        { key: SA.ProjectId, value: run.project_id },
        { key: SA.AgentId, value: run.agent_id ?? '' },
        { key: SA.ConversationId, value: run.conversation_client_id },
        { key: SA.Namespace, value: run.conversation_namespace },
      ],
    });
  }
}
