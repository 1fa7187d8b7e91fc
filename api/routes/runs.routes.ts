import type { AppDeps } from '../deps.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import type { Page } from '../schemas/common.schemas.js';
import { runResponse } from '../schemas/converse.schemas.js';
import * as s from '../schemas/runs.schemas.js';
import { RunWaitsService } from '../services/run-waits.service.js';
import { RunCancelService } from '../services/run-cancel.service.js';
import { RunsService } from '../services/runs.service.js';

const LIST =
  'Newest first, each in the view of GET /runs/{run_id}. `status` takes one or several run statuses ' +
  '(comma-separated or repeated), `source` one or several sources; `start_time`/`end_time` bound `created_at`.';

/** Lists of runs (per project, conversation and agent) and the approvals waiting across a project. */
export function runListRoutes(deps: AppDeps): ApiRouter[] {
  const runs = new RunsService(deps.db, deps.config);

  const byProject = new ApiRouter('/api/agent-server/runs', 'Runs')
    .access({ read: 'project:read', write: 'project:operate' })
    .route<Validated<never, { project_id: string; agent_id?: string } & s.RunListQuery>>(
      {
        method: 'get',
        path: '/',
        summary: "List a project's runs",
        description: LIST,
        request: s.projectRunList,
        response: s.runListResponse,
      },
      async (ctx, { query }) => ok(ctx, await runs.listForProject(query.project_id, query.agent_id, query)),
    );

  const statistics = new ApiRouter('/api/agent-server/runs', 'Runs')
    .access({ read: 'project:read', write: 'project:operate' })
    .route<Validated<never, s.RunStatisticsQuery>>(
      {
        method: 'get',
        path: '/statistics',
        summary: "Count a project's runs by source, status or agent",
        description:
          'One row per group (`group_by`: `source` by default, `status` or `agent`) of the runs created in the ' +
          'window: how many, how many completed, failed or were cancelled, the tokens and cost they used, and the ' +
          'median duration of those that ended. `source` says which door a run came through: `rest` (converse), ' +
          '`langgraph`, `mcp`, `a2a`, or a `cron`, an `eval` or a parent agent (`sub_agent`). The largest group first.',
        request: s.runStatistics,
        response: s.runStatisticsResponse,
      },
      async (ctx, { query }) => ok(ctx, await runs.statistics(query)),
    );

  const byConversation = new ApiRouter('/api/agent-server/conversations', 'Runs')
    .access({ read: 'project:read', write: 'project:operate' })
    .route<Validated<{ conversation_id: string }, { project_id?: string } & s.RunListQuery>>(
      {
        method: 'get',
        path: '/:conversation_id/runs',
        summary: "List a conversation's runs (every agent's turns in it)",
        description: `${LIST} Without \`project_id\` the conversation id must be unique across projects (else 400 naming \`project_id\`).`,
        request: s.conversationRunList,
        response: s.runListResponse,
      },
      async (ctx, { params, query }) =>
        ok(ctx, await runs.listForConversation(params.conversation_id, query.project_id, query)),
    );

  const byAgent = new ApiRouter('/api/agent-server/agents', 'Runs')
    .access({ read: 'project:read', write: 'project:operate', project: { table: 'agents' } })
    .route<Validated<{ id: string }, { project_id?: string } & s.RunListQuery>>(
      {
        method: 'get',
        path: '/:id/runs',
        summary: "List an agent's runs across its conversations",
        description: LIST,
        request: s.agentRunList,
        response: s.runListResponse,
      },
      async (ctx, { params, query }) => ok(ctx, await runs.listForAgent(params.id, query.project_id, query)),
    );

  const inbox = new ApiRouter('/api/agent-server/approvals', 'Runs')
    .access({ read: 'project:read', write: 'project:operate' })
    .route<Validated<never, { project_id: string; agent_id?: string } & Page>>(
      {
        method: 'get',
        path: '/',
        summary: 'Tool calls waiting for approval across the sessions of a project',
        description:
          'One entry per paused run (status `awaiting_approval`), the most recently paused first: the calls waiting ' +
          "(`id`, `name`, `arguments`), since when, and when the agent's `approval_timeout_ms` declines them. " +
          'Decide with POST /runs/{run_id}/approvals `{approved_call_ids, rejected_call_ids}`; a decided run ' +
          'leaves the list.',
        request: s.approvalInbox,
        response: s.approvalInboxResponse,
      },
      async (ctx, { query }) => ok(ctx, await runs.pendingApprovals(query.project_id, query.agent_id, query)),
    );

  const cancels = new RunCancelService(deps);
  const cancel = new ApiRouter('/api/agent-server/runs', 'Runs')
    .access({ read: 'project:read', write: 'project:operate' })
    .route<Validated<{ run_id: string }, { project_id?: string }, s.CancelBody>>(
      {
        method: 'post',
        path: '/:run_id/cancel',
        summary: 'Cancel a run: stop its turn in any state, keeping or removing what it produced',
        description:
          'Stops the run whether it is queued, running or awaiting approval: the model call is aborted and running ' +
          'tool calls are cancelled; the run ends `cancelled` (event `run.cancelled {action}`), within a second. ' +
          '`interrupt` keeps what the turn produced (a cut-off answer as far as it streamed; tool calls without a ' +
          'result are answered "cancelled", so the next turn is valid for every vendor). `rollback` removes the ' +
          "run's messages (its user message too), summaries and events from the conversation; the run stays, " +
          'with `rolled_back: true`. Answers with the run once it has ended; a cancelled run again answers 200; ' +
          'a run that completed or failed answers 409.',
        request: s.runCancel,
        response: runResponse,
      },
      async (ctx, { params, query, body }) =>
        ok(ctx, await cancels.cancel(params.run_id, query.project_id, body.action)),
    );

  const waits = new RunWaitsService(deps, cancels);
  const budget = new ApiRouter('/api/agent-server/runs', 'Runs')
    .access({ read: 'project:read', write: 'project:operate' })
    .route<Validated<{ run_id: string }, { project_id?: string }, s.BudgetBody>>(
      {
        method: 'post',
        path: '/:run_id/budget',
        summary: 'Decide a run waiting for budget: try again now, or cancel it',
        description:
          "A run whose model call did not fit in a budget (the agent's, the conversation's or the project key's) " +
          'waits with status `awaiting_budget` and `pause.details` naming the budget and what the call needs. ' +
          'Raising that budget (PATCH of the agent, conversation or key) or the start of its next period wakes it ' +
          'on its own; `resume` tries now and answers 409 while the call still does not fit (the run keeps ' +
          'waiting); `cancel` ends it `cancelled`, keeping what it produced. 409 unless the run waits for budget.',
        request: s.runBudget,
        response: runResponse,
      },
      async (ctx, { params, query, body }) =>
        ok(ctx, await waits.budget(params.run_id, query.project_id, body.action)),
    );
  const decision = new ApiRouter('/api/agent-server/runs', 'Runs')
    .access({ read: 'project:read', write: 'project:operate' })
    .route<Validated<{ run_id: string }, { project_id?: string }, s.DecisionBody>>(
      {
        method: 'post',
        path: '/:run_id/decision',
        summary: 'Decide a tool call whose outcome is unknown: call it again, or supply its result',
        description:
          "A call of one of the agent's `non_idempotent_tools` whose worker died mid-call is not repeated " +
          'blindly: the run waits with status `awaiting_decision` and `pause.details` naming the call. `retry` ' +
          "calls the tool again; `supply` answers the call with `result` and the turn goes on. The agent's " +
          '`decision_timeout_ms` fails the call when no decision comes. 409 unless the run waits for a decision.',
        request: s.runDecision,
        response: runResponse,
      },
      async (ctx, { params, query, body }) =>
        ok(ctx, await waits.decide(params.run_id, query.project_id, body)),
    );

  const input = new ApiRouter('/api/agent-server/runs', 'Runs')
    .access({ read: 'project:read', write: 'project:operate' })
    .route<Validated<{ run_id: string }, { project_id?: string }, s.InputBody>>(
      {
        method: 'post',
        path: '/:run_id/input',
        summary: 'Answer the question an MCP server asked during a tool call',
        description:
          'An MCP server may ask the user something during a call (elicitation): the run waits with status ' +
          '`awaiting_input` and `pause.details` holding the `message` and, for a form, its `requested_schema` ' +
          '(for a page to open, its `url`). `accept` answers with `content`, validated against the schema after ' +
          'its defaults fill what is left out (400 naming the field); `decline` and `cancel` say the person would not. ' +
          "The call goes on; the agent's `input_timeout_ms` declines when no answer comes. 409 unless the run " +
          'waits for input.',
        request: s.runInput,
        response: runResponse,
      },
      async (ctx, { params, query, body }) =>
        ok(ctx, await waits.input(params.run_id, query.project_id, body)),
    );

  return [statistics, byProject, byConversation, byAgent, inbox, cancel, budget, decision, input];
}
