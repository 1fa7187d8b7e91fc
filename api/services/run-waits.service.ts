import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { fits, type BudgetScope } from '../../core/budgets/types.js';
import type { DbRun } from '../../core/db/tables/index.js';
import { ConflictError, NotFoundError, ServiceUnavailableError } from '../../core/errors.js';
import { BudgetsRepository } from '../../core/repositories/budgets.repository.js';
import { MeteringRepository } from '../../core/repositories/metering.repository.js';
import { RunsRepository } from '../../core/repositories/runs.repository.js';
import { RunInputRequestsRepository } from '../../core/repositories/run-input-requests.repository.js';
import {
  authorizationResumeUpdate,
  budgetResumeUpdate,
  inputAnswerUpdate,
  toolDecisionUpdate,
  type InputAnswer,
  type InputAnswerArgs,
  type ToolDecisionArgs,
} from '../../workflows/session.definitions.js';
import { checkedAnswer } from './input-answers.js';
import type { AppDeps } from '../deps.js';
import type { RunView } from '../schemas/runs.schemas.js';
import { RunCancelService } from './run-cancel.service.js';
import { RunsService } from './runs.service.js';

/** What a budget pause records of the budget (the run view's `pause.details`, with the internal `scope_id`). */
interface BudgetPauseDetails {
  scope: BudgetScope;
  scope_id: string;
  needed_usd: number;
  needed_tokens: number;
}

/**
 * The decisions on runs that wait for something other than approval: for
 * budget (POST /runs/{id}/budget, and the wake-up of a raised budget) and for
 * a decision on a tool call whose outcome is unknown (POST /runs/{id}/decision).
 * Each is delivered to the run's session workflow as an Update, refused (409)
 * unless the run waits for that reason.
 */
export class RunWaitsService {
  private readonly runs: RunsRepository;
  private readonly views: RunsService;
  private readonly budgets: BudgetsRepository;

  constructor(
    private readonly deps: AppDeps,
    private readonly cancels = new RunCancelService(deps),
  ) {
    this.runs = new RunsRepository(deps.db);
    this.views = new RunsService(deps.db, deps.config);
    this.budgets = new BudgetsRepository(deps.db);
  }

  /** `resume`: 409 while the waiting call still does not fit; `cancel`: the run ends cancelled (what it produced kept). */
  async budget(runId: string, projectId: string | undefined, action: 'resume' | 'cancel'): Promise<RunView> {
    const run = await this.waiting(runId, projectId, 'awaiting_budget');
    if (action === 'cancel') return this.cancels.cancel(runId, projectId, 'interrupt');
    const room = await this.room(run);
    if (!room.fits)
      throw new ConflictError({
        status: run.status,
        reason: `the waiting call still does not fit in the ${room.scope} budget: raise it, or wait for its next period`,
      });
    await this.update(run, () =>
      this.deps.temporal.client.workflow
        .getHandle(run.workflow_id)
        .executeUpdate(budgetResumeUpdate, { args: [{ runId, by: 'user' }] }),
    );
    return this.views.view(runId);
  }

  /** A person's decision on the tool call whose outcome is unknown. */
  async decide(
    runId: string,
    projectId: string | undefined,
    decision: Omit<ToolDecisionArgs, 'runId'>,
  ): Promise<RunView> {
    const run = await this.waiting(runId, projectId, 'awaiting_decision');
    await this.update(run, () =>
      this.deps.temporal.client.workflow
        .getHandle(run.workflow_id)
        .executeUpdate(toolDecisionUpdate, { args: [{ runId, ...decision }] }),
    );
    return this.views.view(runId);
  }

  /**
   * A person's answer to the question an MCP server asked. A call still
   * waiting connected takes it from the question's row (on whichever worker
   * it runs); otherwise the session workflow gets it as an Update and makes
   * the call again.
   */
  async input(runId: string, projectId: string | undefined, body: InputAnswer): Promise<RunView> {
    const run = await this.waiting(runId, projectId, 'awaiting_input');
    const questions = new RunInputRequestsRepository(this.deps.db);
    const question = await questions.pending(runId);
    if (!question) throw new ConflictError({ reason: 'the run has no unanswered question' });
    const schema = question.request.requested_schema as Record<string, unknown> | undefined;
    const answer: InputAnswer =
      body.action === 'accept'
        ? { action: 'accept', content: checkedAnswer(schema, body.content ?? {}) }
        : { action: body.action };
    const answered = await questions.answer(question.id, answer);
    if (!answered) throw new ConflictError({ reason: 'the question was already answered' });
    if (answered.state === 'released') await this.deliverAnswer(run, { runId, ...answer });
    else await this.stoppedWaiting(runId, 'awaiting_input');
    return this.views.view(runId);
  }

  /**
   * The OAuth flow of an MCP server completed (for the project, or for one
   * end user): wakes the runs waiting for it. A run that cannot be reached
   * is left waiting (logged); its timeout ends the wait.
   */
  async authorized(serverId: string, endUserId: string | null): Promise<void> {
    for (const run of await this.runs.awaitingAuthorization(serverId, endUserId)) {
      try {
        await this.deps.temporal.client.workflow
          .getHandle(run.workflow_id)
          .executeUpdate(authorizationResumeUpdate, { args: [{ runId: run.id }] });
      } catch (err) {
        this.deps.logger.warn({ err, runId: run.id }, 'could not wake a run waiting for authorization');
      }
    }
  }

  /**
   * The answer to a question its call released: the session workflow gets
   * it as an Update. A call that released it moments ago may not have
   * returned yet, so the session does not wait for it yet and refuses: the
   * answer is stored, so it is offered again for a few seconds.
   */
  private async deliverAnswer(run: DbRun, args: InputAnswerArgs, withinMs = 5_000): Promise<void> {
    const until = Date.now() + withinMs;
    for (;;) {
      try {
        return await this.update(run, () =>
          this.deps.temporal.client.workflow
            .getHandle(run.workflow_id)
            .executeUpdate(inputAnswerUpdate, { args: [args] }),
        );
      } catch (err) {
        if (!(err instanceof ConflictError) || Date.now() > until) throw err;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  /** A call waiting connected takes an answer within a poll: the answer returns the run as it then is. */
  private async stoppedWaiting(runId: string, status: DbRun['status'], withinMs = 3_000): Promise<void> {
    const until = Date.now() + withinMs;
    while (Date.now() < until) {
      const run = await this.runs.findById(runId);
      if (!run || run.status !== status) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /**
   * After a budget was raised (or removed): wakes the runs waiting on it whose
   * call now fits. A run that cannot be reached is left waiting (logged): its
   * next period, a person or another raise wakes it.
   */
  async wake(scope: BudgetScope, scopeId: string): Promise<void> {
    for (const waiting of await this.budgets.waitingOn(scope, scopeId)) {
      const run = await this.runs.findById(waiting.id);
      if (!run || run.status !== 'awaiting_budget' || !(await this.room(run)).fits) continue;
      try {
        await this.deps.temporal.client.workflow
          .getHandle(run.workflow_id)
          .executeUpdate(budgetResumeUpdate, { args: [{ runId: run.id, by: 'budget_raised' }] });
      } catch (err) {
        this.deps.logger.warn({ err, runId: run.id }, 'could not wake a run waiting for budget');
      }
    }
  }

  /** `wake` for a conversation named as the API names it. */
  async wakeConversation(projectId: string, conversationId: string): Promise<void> {
    const pk = await this.budgets.conversationPk(projectId, conversationId);
    if (pk) await this.wake('conversation', pk);
  }

  private async waiting(
    runId: string,
    projectId: string | undefined,
    status: DbRun['status'],
  ): Promise<DbRun> {
    const run = await this.runs.findById(runId);
    if (!run || (projectId !== undefined && run.project_id !== projectId)) throw new NotFoundError('run');
    if (run.status !== status)
      throw new ConflictError({
        status: run.status,
        reason: `the run is not ${status.replace('_', ' ')} (status: ${run.status})`,
      });
    return run;
  }

  /** Whether the waiting call fits now in the budget it waits for (a budget removed holds nothing back). */
  private async room(run: DbRun): Promise<{ fits: boolean; scope: BudgetScope }> {
    const d = run.pause?.details as BudgetPauseDetails | undefined;
    if (!d) return { fits: true, scope: 'agent' };
    const need = { usd: Number(d.needed_usd), tokens: Number(d.needed_tokens) };
    const budget = await this.budgets.budgetOf(d.scope, d.scope_id);
    if (!budget) return { fits: true, scope: d.scope };
    if (d.scope === 'key') {
      const use = await new MeteringRepository(this.deps.db).budgetPeriod(d.scope_id, budget.period);
      const figures = { ...use, resets_at: use.period_end, spent_tokens: 0, reserved_tokens: 0 };
      return { fits: fits(budget, figures, { usd: need.usd, tokens: 0 }), scope: d.scope };
    }
    const use = await this.budgets.use({ scope: d.scope, scope_id: d.scope_id, budget });
    return { fits: fits(budget, use, need), scope: d.scope };
  }

  private async update(run: DbRun, send: () => Promise<unknown>): Promise<void> {
    try {
      await send();
    } catch (err) {
      // The validator refused: the run stopped waiting meanwhile.
      if (err instanceof WorkflowUpdateFailedError)
        throw new ConflictError({ reason: err.cause?.message ?? err.message });
      if (err instanceof WorkflowNotFoundError)
        throw new ConflictError({ reason: 'the session is no longer running' });
      this.deps.logger.error({ err, runId: run.id }, 'could not deliver a decision to its session workflow');
      throw new ServiceUnavailableError({ temporal: 'the session workflow could not be reached; try again' });
    }
  }
}
