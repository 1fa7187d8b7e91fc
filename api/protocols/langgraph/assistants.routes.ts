import type { AppDeps } from '../../deps.js';
import type { ApiRouter } from '../../http/api-router.js';
import type { Validated } from '../../middleware/validate.js';
import { AgentsService } from '../../services/agents.service.js';
import { RunWaitsService } from '../../services/run-waits.service.js';
import { AssistantsDoor } from './assistants-service.js';
import * as s from './assistants-schemas.js';
import { AGENT_GRAPH, assistantSchemas } from './assistants-view.js';
import { protocolRouter, requireProject, send } from './door.js';
import { ProtocolError } from './errors.js';

type Project = { project_id: string };
type P = Project & { assistant_id: string };

/** The Agent Protocol's assistants: our agents (an assistant is an agent; its graph, the agent it copies). */
export function assistantsRoutes(deps: AppDeps): ApiRouter {
  const agents = new AgentsService(deps.db, {
    sandboxEnabled: deps.config.sandboxEnabled,
    temporal: deps.temporal.client,
  });
  const door = new AssistantsDoor(deps.db, agents, new RunWaitsService(deps));
  const one = { params: s.assistantParams };
  return protocolRouter()
    .route<Validated<Project, never, s.AssistantCreateBody>>(
      {
        method: 'post',
        path: '/assistants',
        permission: 'project:develop',
        summary: 'Create an assistant (a copy of the agent graph_id names)',
        description:
          "`graph_id` is an agent of the project (id or name): the new agent takes its settings (model, prompt, tools …) with the assistant's own name (default: the graph's with a short suffix), description, config, context and metadata. An `assistant_id` that exists is a 409, or the existing assistant with `if_exists: do_nothing`.",
        request: { params: s.projectOnly, body: s.assistantCreate },
        response: s.assistantResponse,
      },
      async (ctx, { params, body }) => {
        await requireProject(deps.db, params.project_id);
        send(ctx, await door.create(params.project_id, body));
      },
    )
    .route<Validated<Project, never, s.AssistantSearchBody>>(
      {
        method: 'post',
        path: '/assistants/search',
        permission: 'project:read',
        summary: 'Search assistants by graph, metadata (containment) and name (substring)',
        request: { params: s.projectOnly, body: s.assistantSearch },
        response: s.assistantListResponse,
      },
      async (ctx, { params, body }) => {
        await requireProject(deps.db, params.project_id);
        const page = await door.search(params.project_id, body);
        // The protocol's cursor: the offset of the next page, when there is one.
        if (page.more) ctx.set('X-Pagination-Next', String(body.offset + page.items.length));
        send(ctx, page.items);
      },
    )
    .route<Validated<Project, never, s.AssistantFilterBody>>(
      {
        method: 'post',
        path: '/assistants/count',
        permission: 'project:read',
        summary: 'Count assistants matching the filters',
        request: { params: s.projectOnly, body: s.assistantCount },
      },
      async (ctx, { params, body }) => {
        await requireProject(deps.db, params.project_id);
        send(ctx, await door.count(params.project_id, body));
      },
    )
    .route<Validated<P>>(
      {
        method: 'get',
        path: '/assistants/:assistant_id',
        summary: 'Get an assistant (by id, or by its agent name)',
        request: one,
        response: s.assistantResponse,
      },
      async (ctx, { params }) => {
        await requireProject(deps.db, params.project_id);
        send(ctx, await door.get(params.project_id, params.assistant_id));
      },
    )
    .route<Validated<P, never, s.AssistantPatchBody>>(
      {
        method: 'patch',
        path: '/assistants/:assistant_id',
        permission: 'project:develop',
        summary: 'Update an assistant: a new version of its agent',
        description:
          "Sets what is given; `metadata` is merged into the existing. Another `graph_id` gives the assistant that agent's settings.",
        request: { ...one, body: s.assistantPatch },
        response: s.assistantResponse,
      },
      async (ctx, { params, body }) => {
        await requireProject(deps.db, params.project_id);
        send(ctx, await door.patch(params.project_id, params.assistant_id, body));
      },
    )
    .route<Validated<P, { delete_threads: boolean }>>(
      {
        method: 'delete',
        path: '/assistants/:assistant_id',
        permission: 'project:develop',
        summary: 'Delete an assistant (its agent; its threads keep their history)',
        request: { ...one, query: s.deleteQuery },
      },
      async (ctx, { params, query }) => {
        await requireProject(deps.db, params.project_id);
        if (query.delete_threads)
          throw new ProtocolError(
            422,
            'delete_threads is not supported: delete each thread (DELETE /threads/{thread_id})',
          );
        await door.delete(params.project_id, params.assistant_id);
        send(ctx, null, 204);
      },
    )
    .route<Validated<P>>(
      {
        method: 'get',
        path: '/assistants/:assistant_id/graph',
        summary: "The assistant's graph: the session's loop of model and tools",
        request: { ...one, query: s.graphQuery },
      },
      async (ctx, { params }) => {
        await requireProject(deps.db, params.project_id);
        await door.find(params.project_id, params.assistant_id);
        send(ctx, AGENT_GRAPH);
      },
    )
    .route<Validated<P>>(
      {
        method: 'get',
        path: '/assistants/:assistant_id/schemas',
        summary: "The assistant's input, output, state, config and context schemas",
        request: one,
      },
      async (ctx, { params }) => {
        await requireProject(deps.db, params.project_id);
        send(ctx, assistantSchemas(await door.find(params.project_id, params.assistant_id)));
      },
    )
    .route<Validated<P>>(
      {
        method: 'get',
        path: '/assistants/:assistant_id/subgraphs',
        summary: "The assistant's subgraphs: none",
        request: { ...one, query: s.subgraphQuery },
      },
      async (ctx, { params }) => {
        await requireProject(deps.db, params.project_id);
        await door.find(params.project_id, params.assistant_id);
        send(ctx, {});
      },
    )
    .route<Validated<P>>(
      {
        method: 'get',
        path: '/assistants/:assistant_id/subgraphs/:namespace',
        summary: "The assistant's subgraphs under a namespace: none",
        request: { params: s.subgraphParams, query: s.subgraphQuery },
      },
      async (ctx, { params }) => {
        await requireProject(deps.db, params.project_id);
        await door.find(params.project_id, params.assistant_id);
        send(ctx, {});
      },
    )
    .route<Validated<P, never, s.AssistantVersionsBody>>(
      {
        method: 'post',
        path: '/assistants/:assistant_id/versions',
        permission: 'project:read',
        summary: "List an assistant's versions (its agent's), newest first",
        request: { ...one, body: s.assistantVersions },
        response: s.assistantListResponse,
      },
      async (ctx, { params, body }) => {
        await requireProject(deps.db, params.project_id);
        send(ctx, await door.versions(params.project_id, params.assistant_id, body));
      },
    )
    .route<Validated<P, never, { version: number }>>(
      {
        method: 'post',
        path: '/assistants/:assistant_id/latest',
        permission: 'project:develop',
        summary: "Put one of the assistant's versions back in force (without a new version)",
        description:
          'As POST /api/agent-server/agents/{id}/versions/{version}/pin: a version naming a model or prompt that no longer exists is refused (422 naming the field).',
        request: { ...one, body: s.assistantLatest },
        response: s.assistantResponse,
      },
      async (ctx, { params, body }) => {
        await requireProject(deps.db, params.project_id);
        send(ctx, await door.setLatest(params.project_id, params.assistant_id, body.version));
      },
    );
}
