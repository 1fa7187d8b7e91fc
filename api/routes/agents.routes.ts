import { ReadCache } from '../cache/change-feed.js';
import type { AppDeps } from '../deps.js';
import type { AgentWithServers } from '../../core/repositories/agents.repository.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import * as s from '../schemas/agents.schemas.js';
import type { Page } from '../schemas/common.schemas.js';
import { AgentsService } from '../services/agents.service.js';
import { RunWaitsService } from '../services/run-waits.service.js';

type Id = { id: string };
type Scope = { project_id: string };
type OptScope = { project_id?: string };

export function agentRoutes(deps: AppDeps): ApiRouter {
  const waits = new RunWaitsService(deps);
  const svc = new AgentsService(
    deps.db,
    { sandboxEnabled: deps.config.sandboxEnabled, temporal: deps.temporal.client },
    new ReadCache<AgentWithServers>(deps.changes, 'agents'),
  );
  return new ApiRouter('/api/agent-server/agents', 'Agents')
    .access({ read: 'project:read', write: 'project:develop', project: { table: 'agents' } })
    .route<Validated<never, Scope, s.AgentFields>>(
      {
        method: 'post',
        path: '/',
        summary: 'Create an agent',
        description:
          'Defaults: enable_history true, summarizer_type none, prompt_label latest, max_iterations 20, sandbox disabled. ' +
          'Every id must name a resource of the same project, and the prompt must have a version with the label.',
        request: s.agentCreate,
        response: s.agentResponse,
      },
      async (ctx, { query, body }) => ok(ctx, await svc.create(query.project_id, body)),
    )
    .route<Validated<never, Scope, s.AgentUpdateBody>>(
      {
        method: 'post',
        path: '/check',
        summary: "Check an agent's configuration without saving it",
        description:
          'Answers the warnings an agent configured so would carry (its `warnings`), each with the field it is ' +
          "about: sandbox.enabled on a server without a sandbox backend, a model no provider can serve or the project's " +
          "virtual key does not grant (model_id, llm_summarizer_model_id), template variables that only a conversation's " +
          'context can give a value (prompt_id, llm_summarizer_prompt_id). Any of the fields, none required; saves nothing. ' +
          "The console's agent form asks it while the agent is configured, before its first turn.",
        request: s.agentCheck,
        response: s.agentCheckResponse,
      },
      async (ctx, { query, body }) => ok(ctx, { warnings: await svc.check(query.project_id, body) }),
    )
    .route<Validated<never, Scope & Page>>(
      {
        method: 'get',
        path: '/',
        summary: "List a project's agents",
        request: s.agentList,
        response: s.agentListResponse,
      },
      async (ctx, { query }) => ok(ctx, await svc.list(query.project_id, query)),
    )
    .route<Validated<never, { name: string; project_id?: string }>>(
      {
        method: 'get',
        path: '/by-name',
        summary: 'Get an agent by name',
        request: s.agentByName,
        response: s.agentResponse,
      },
      async (ctx, { query }) => ok(ctx, await svc.getByName(query.name, query.project_id)),
    )
    .route<Validated<Id, OptScope>>(
      {
        method: 'get',
        path: '/:id',
        summary: 'Get an agent',
        request: s.agentGet,
        response: s.agentResponse,
      },
      async (ctx, { params, query }) => ok(ctx, await svc.get(params.id, query.project_id)),
    )
    .route<Validated<Id, OptScope, s.AgentUpdateBody>>(
      {
        method: 'patch',
        path: '/:id',
        summary: 'Update an agent',
        description:
          'Partial update; the merged configuration is validated as a whole. `mcp_servers` replaces the list.',
        request: s.agentUpdate,
        response: s.agentResponse,
      },
      async (ctx, { params, query, body }) => {
        const agent = await svc.update(params.id, query.project_id, body);
        // A raised budget wakes the runs waiting on it.
        if (body.budget !== undefined) await waits.wake('agent', agent.id);
        ok(ctx, agent);
      },
    )
    .route<Validated<Id, OptScope & Page>>(
      {
        method: 'get',
        path: '/:id/versions',
        summary: "List an agent's versions",
        description:
          'Every write of the agent (create, update) made a version: all its settings as they were then. ' +
          'Newest first; `in_force` marks the one the agent runs with (runs record it as `agent_version`).',
        request: s.agentVersionList,
        response: s.agentVersionListResponse,
      },
      async (ctx, { params, query }) => ok(ctx, await svc.listVersions(params.id, query.project_id, query)),
    )
    .route<Validated<Id & { version: number }, OptScope>>(
      {
        method: 'post',
        path: '/:id/versions/:version/pin',
        summary: "Put one of the agent's versions back in force",
        description:
          "The version's settings become the agent's, without making a new version (the next update does). " +
          'Checked like an update: a model, prompt or other resource it names that no longer exists is a 400 ' +
          'naming the field; its name taken by another agent since, a 409; an unknown version, a 404.',
        request: s.agentVersionPin,
        response: s.agentResponse,
      },
      async (ctx, { params, query }) => {
        const agent = await svc.pin(params.id, query.project_id, params.version);
        // The version's budget may be higher: the runs waiting on it look again.
        await waits.wake('agent', agent.id);
        ok(ctx, agent);
      },
    )
    .route<Validated<Id, OptScope>>(
      {
        method: 'delete',
        path: '/:id',
        summary: 'Delete an agent (its conversations keep their history)',
        request: s.agentDelete,
      },
      async (ctx, { params, query }) => {
        await svc.delete(params.id, query.project_id);
        ok(ctx, {});
      },
    );
}
