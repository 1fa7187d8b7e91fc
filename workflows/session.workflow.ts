import {
  ActivityCancellationType,
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { SessionActivities } from '../activities/session/session-activities.js';
import { activityDefaults } from '../temporal.config.js';
import {
  approvalUpdate,
  authorizationResumeUpdate,
  budgetResumeUpdate,
  inputAnswerUpdate,
  cancelRunUpdate,
  converseUpdate,
  sessionStateQuery,
  toolDecisionUpdate,
  type ApprovalArgs,
  type AuthorizationResumeArgs,
  type InputAnswerArgs,
  type BudgetResumeArgs,
  type ToolDecisionArgs,
  type CancelRunArgs,
  type ConverseUpdateArgs,
  type SessionInput,
  type SessionSettings,
} from './session.definitions.js';
import { SessionEntity, type SessionActivityStubs } from './session/session-entity.js';

/**
 * One agent session (agent + conversation): the wiring only. Each user
 * message arrives as an Update carrying only its run id; turns run one at a
 * time in arrival order (session/turn-queue.ts), step by step
 * (session/turn-runner.ts), pausing for approvals (session/approval-gate.ts).
 * This function registers the handlers and runs the life cycle: idle
 * completion and continue-as-new.
 */
export async function sessionWorkflow(input: SessionInput): Promise<{ turns: number }> {
  const { settings } = input;
  const session = new SessionEntity(activityStubs(settings), input.turnsCompleted ?? 0);

  /*
   * The turn runs inside its Update's handler, so its activities belong to
   * the converse request that sent it (one trace per request). The API waits
   * only for the Update to be accepted; handlers take turns in arrival order.
   */
  // Handlers hand back the entity's own promises (no extra async layer between), as recorded histories ran.
  setHandler(converseUpdate, (args) => session.converse(args), {
    validator: (args: ConverseUpdateArgs | undefined) => session.validateConverse(args),
  });
  /*
   * A person's decision on paused calls. The validator refuses (and nothing
   * is recorded) unless the run is paused on exactly those undecided calls;
   * the handler records the decisions in Postgres before it returns, so the
   * API answers with what is stored.
   */
  setHandler(approvalUpdate, (args) => session.approve(args), {
    validator: (args: ApprovalArgs | undefined) => session.validateApproval(args),
  });
  /*
   * POST /runs/{id}/cancel: stops the run in any state (running, waiting for
   * approval, queued) and answers once it has ended.
   */
  setHandler(cancelRunUpdate, (args) => session.cancelRun(args), {
    validator: (args: CancelRunArgs | undefined) => session.validateCancel(args),
  });
  /*
   * POST /runs/{id}/budget (resume) and a raised budget: wakes the run waiting
   * for budget; answers once its resumption is recorded.
   */
  setHandler(budgetResumeUpdate, (args) => session.resumeBudget(args), {
    validator: (args: BudgetResumeArgs | undefined) => session.validateBudgetResume(args),
  });
  /* POST /runs/{id}/decision: a person decides a tool call whose outcome is unknown. */
  setHandler(toolDecisionUpdate, (args) => session.decideToolCall(args), {
    validator: (args: ToolDecisionArgs | undefined) => session.validateToolDecision(args),
  });
  /* The OAuth flow of an MCP server the run waits for completed (the API's callback). */
  setHandler(authorizationResumeUpdate, (args) => session.resumeAuthorization(args), {
    validator: (args: AuthorizationResumeArgs | undefined) => session.validateAuthorizationResume(args),
  });
  /* POST /runs/{id}/input: a person answers the question an MCP server asked. */
  setHandler(inputAnswerUpdate, (args) => session.answerInput(args), {
    validator: (args: InputAnswerArgs | undefined) => session.validateInputAnswer(args),
  });
  setHandler(sessionStateQuery, () => session.state());

  for (;;) {
    const gotMessage = await condition(() => !session.queue.empty, settings.idleTimeoutMs);
    if (!gotMessage) {
      // Idle: finish, unless an Update slipped in meanwhile.
      await condition(allHandlersFinished);
      if (session.queue.empty) {
        log.info('session idle; completing', { turns: session.turns });
        return { turns: session.turns };
      }
      continue;
    }
    await condition(() => session.queue.empty);
    if (workflowInfo().continueAsNewSuggested || session.turnsThisRun >= settings.continueAsNewAfterTurns) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof sessionWorkflow>({ ...input, turnsCompleted: session.turns });
    }
  }
}

/**
 * A cancelled turn waits until its running activity has stopped (the model
 * call aborted, the tool call cancelled), so nothing it writes lands after the
 * run's cancelled outcome. Not a command: histories replay the same.
 */
const untilStopped = { cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED };

/** The session's activities with their options; model and tool heartbeats come from the session's settings. */
function activityStubs(settings: SessionSettings): SessionActivityStubs {
  // Bookkeeping in Postgres: retried until it works (an outage delays the turn, never fails the session).
  const { answerToolCalls, finishTurn, pauseForApproval, recordApprovals, cancelTurn, pauseRun, resumeRun } =
    proxyLocalActivities<SessionActivities>({
      startToCloseTimeout: '30 seconds',
      retry: { initialInterval: '500 ms', backoffCoefficient: 2, maximumInterval: '30 seconds' },
      ...untilStopped,
    });
  const { summarizeHistory } = proxyActivities<SessionActivities>({
    ...activityDefaults.modelCall,
    heartbeatTimeout: settings.modelHeartbeatTimeoutMs,
    ...untilStopped,
  });
  const { callModel } = proxyActivities<SessionActivities>({
    ...activityDefaults.modelCall,
    heartbeatTimeout: settings.modelHeartbeatTimeoutMs,
    ...untilStopped,
  });
  const { runToolCalls, listTools } = proxyActivities<SessionActivities>({
    ...activityDefaults.toolCall,
    ...untilStopped,
  });
  const toolCallOptions = {
    ...activityDefaults.toolCall,
    heartbeatTimeout: settings.toolHeartbeatTimeoutMs ?? settings.modelHeartbeatTimeoutMs,
    ...untilStopped,
  };
  const { runMcpTool, runSandboxCommand, pollMcpTask, cancelMcpTask } =
    proxyActivities<SessionActivities>(toolCallOptions);
  return {
    callModel,
    summarizeHistory,
    listTools,
    runToolCalls,
    runMcpTool,
    pollMcpTask,
    cancelMcpTask,
    runSandboxCommand,
    toolCallOptions,
    answerToolCalls,
    finishTurn,
    cancelTurn,
    pauseForApproval,
    recordApprovals,
    pauseRun,
    resumeRun,
  };
}
