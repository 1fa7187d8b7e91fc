import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { isTerminal } from '../../core/db/tables/index.js';
import { ConflictError, NotFoundError, ServiceUnavailableError } from '../../core/errors.js';
import { RunsRepository } from '../../core/repositories/runs.repository.js';
import { cancelRunUpdate, type CancelAction } from '../../workflows/session.definitions.js';
import type { AppDeps } from '../deps.js';
import type { RunView } from '../schemas/runs.schemas.js';
import { RunsService } from './runs.service.js';

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
    const run = await this.runs.findById(runId);
    if (!run || (projectId !== undefined && run.project_id !== projectId)) throw new NotFoundError('run');
    if (!isTerminal(run.status)) await this.deliver(runId, run.workflow_id, action);
    const view = await this.views.view(runId);
    if (view.status !== 'cancelled')
      throw new ConflictError({
        status: view.status,
        reason: `the run has already ended (status: ${view.status}); only a running or waiting run can be cancelled`,
      });
    return view;
  }

  private async deliver(runId: string, workflowId: string, action: CancelAction): Promise<void> {
    const handle = this.deps.temporal.client.workflow.getHandle(workflowId);
    try {
      await handle.executeUpdate(cancelRunUpdate, { args: [{ runId, action }] });
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError)
        throw new ConflictError({ reason: err.cause?.message ?? err.message });
      if (err instanceof WorkflowNotFoundError)
        throw new ConflictError({ reason: 'the session of this run is no longer running' });
      this.deps.logger.error({ err, runId }, 'could not deliver a cancel to its session workflow');
      throw new ServiceUnavailableError({ temporal: 'the session workflow could not be reached; try again' });
    }
  }
}
