import type { AppDeps } from '../deps.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import type { Page } from '../schemas/common.schemas.js';
import * as s from '../schemas/evals.schemas.js';
import { EvalsService } from '../services/evals.service.js';

type Id = { id: string };
type ProjectQ = { project_id: string };
type ScopeQ = { project_id?: string };

export function evalRoutes(deps: AppDeps): ApiRouter {
  const evals = new EvalsService(deps);
  return new ApiRouter('/api/agent-server/evals', 'Evals')
    .access({ read: 'project:read', write: 'project:develop', project: { table: 'evals' } })
    .route<Validated<never, ProjectQ, s.EvalCreateBody>>(
      {
        method: 'post',
        path: '/',
        summary: 'Start an eval: replay recorded conversations (or a dataset) against variants of the agent',
        description:
          'Answers the eval, `queued`, and starts its workflow: each conversation × variant (at most `concurrency` at once) ' +
          "replays every recorded user turn of the agent in a scratch conversation of its own (namespace `eval`, left out of the conversations list), with the variant's " +
          "prompt version, model and parameters as the turn's overrides. Tool calls are answered from the recording when the " +
          'variant calls the same tool with the same arguments (JSON, keys sorted); otherwise the turn is `diverged` and the ' +
          "conversation's replay stops there (`execute_diverged_tools` runs diverged sandbox commands instead; MCP calls never). " +
          'A dataset eval answers each row in a fresh conversation and compares with `expected_output`. Every id is checked against ' +
          "the project: a 400 names the field. The turns and the judge are metered on the project's key like any turn.",
        request: s.evalCreate,
        response: s.evalResponse,
      },
      async (ctx, { query, body }) => ok(ctx, await evals.create(query.project_id, body)),
    )
    .route<Validated<never, ProjectQ & Page>>(
      {
        method: 'get',
        path: '/',
        summary: "List a project's evals, newest first, with their progress and totals",
        request: s.evalList,
        response: s.evalListResponse,
      },
      async (ctx, { query }) => ok(ctx, await evals.list(query.project_id, query)),
    )
    .route<Validated<Id, ScopeQ>>(
      {
        method: 'get',
        path: '/:id',
        summary: "Get an eval: status, progress, per-variant totals and the thresholds' verdict (`passed`)",
        request: s.evalGet,
        response: s.evalResponse,
      },
      async (ctx, { params, query }) => ok(ctx, await evals.get(params.id, query.project_id)),
    )
    .route<Validated<Id, ScopeQ>>(
      {
        method: 'get',
        path: '/:id/results',
        summary:
          "An eval's per-turn results: the variant's answer beside the original's, with the comparisons",
        request: s.evalResults,
        response: s.evalResultListResponse,
      },
      async (ctx, { params, query }) => ok(ctx, await evals.results(params.id, query.project_id)),
    )
    .route<Validated<Id, ScopeQ>>(
      {
        method: 'delete',
        path: '/:id',
        summary: 'Cancel an eval (its results so far are kept); an ended eval is answered as it is',
        request: s.evalCancel,
        response: s.evalResponse,
      },
      async (ctx, { params, query }) => ok(ctx, await evals.cancel(params.id, query.project_id)),
    );
}
