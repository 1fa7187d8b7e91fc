import type { AppDeps } from '../deps.js';
import type { ProjectLocator } from '../http/project-of.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import { ConversationForkRepository } from '../../core/repositories/conversation-fork.repository.js';
import { ConversationsRepository } from '../../core/repositories/conversations.repository.js';
import type { Page } from '../schemas/common.schemas.js';
import * as s from '../schemas/conversations.schemas.js';
import { ConversationForkService } from '../services/conversation-fork.service.js';
import { ConversationsService } from '../services/conversations.service.js';
import { temporalUiUrl } from '../services/converse.service.js';
import { RunWaitsService } from '../services/run-waits.service.js';

type ProjectQ = { project_id: string };
type ScopeQ = { project_id?: string };

/** A DELETE of a conversation with sessions waits this long for a worker to remove them. */
const DELETE_WAIT_MS = 30_000;

/** A fork of a sandbox agent's conversation waits this long for a worker to copy the workspace. */
const FORK_COPY_WAIT_MS = 120_000;

const BY_ID = 'Without `project_id` the id must be unique across projects (else 400 naming `project_id`).';

/** Conversations, plus the threads router beside it (both under the Conversations tag). */
/** A thread's project is its conversation's. */
const THREAD_PROJECT: ProjectLocator = {
  table: 'threads',
  column: 'threads.id',
  projectColumn: 'conversations.project_id',
  join: ['conversations', 'conversations.pk', 'threads.conversation_pk'],
};

export function conversationRoutes(deps: AppDeps): ApiRouter[] {
  const waits = new RunWaitsService(deps);
  const conversations = new ConversationsService(
    new ConversationsRepository(deps.db),
    (workflowId) => temporalUiUrl(deps.config, workflowId),
    {
      client: deps.temporal.client,
      taskQueue: deps.config.temporalTaskQueue,
      waitMs: DELETE_WAIT_MS,
      logger: deps.logger,
    },
  );
  const forks = new ConversationForkService(
    new ConversationForkRepository(deps.db),
    new ConversationsRepository(deps.db),
    {
      client: deps.temporal.client,
      taskQueue: deps.config.temporalTaskQueue,
      waitMs: FORK_COPY_WAIT_MS,
      logger: deps.logger,
    },
  );
  const byId = new ApiRouter('/api/agent-server/conversations', 'Conversations')
    .access({ read: 'project:read', write: 'project:develop' })
    .route<Validated<never, ProjectQ, s.ConversationCreateBody>>(
      {
        method: 'post',
        path: '/',
        summary: 'Create a conversation ahead of its first message',
        request: s.conversationCreate,
        response: s.conversationResponse,
      },
      async (ctx, { query, body }) => ok(ctx, await conversations.create(query.project_id, body)),
    )
    .route<Validated<never, ProjectQ & s.ConversationFilter & Page>>(
      {
        method: 'get',
        path: '/',
        summary: "List a project's conversations, newest first",
        request: s.conversationList,
        response: s.conversationListResponse,
      },
      async (ctx, { query }) =>
        ok(
          ctx,
          await conversations.list(
            query.project_id,
            { namespace: query.namespace, agent_id: query.agent_id },
            query,
          ),
        ),
    )
    .route<Validated<s.ConversationParams, ScopeQ>>(
      {
        method: 'get',
        path: '/:conversation_id',
        summary: 'Get a conversation by id',
        description: BY_ID,
        request: s.conversationGet,
        response: s.conversationWithSessionsResponse,
      },
      async (ctx, { params, query }) =>
        ok(ctx, await conversations.get(params.conversation_id, query.project_id)),
    )
    .route<Validated<s.ConversationParams, ScopeQ, s.ConversationUpdateBody>>(
      {
        method: 'patch',
        path: '/:conversation_id',
        summary: "Update a conversation's namespace or context",
        description: BY_ID,
        request: s.conversationUpdate,
        response: s.conversationResponse,
      },
      async (ctx, { params, query, body }) => {
        const updated = await conversations.update(params.conversation_id, query.project_id, body);
        // A raised budget wakes the runs waiting on it.
        if (body.budget !== undefined) await waits.wakeConversation(updated.project_id, updated.id);
        ok(ctx, updated);
      },
    )
    .route<Validated<s.ConversationParams, ScopeQ>>(
      {
        method: 'delete',
        path: '/:conversation_id',
        summary: 'Delete a conversation with everything recorded of it',
        description: `${BY_ID} Removes its threads, messages, runs, run events and summaries, stops its sessions (their Temporal histories are deleted), removes their sandboxes and workspaces, and deletes the traces of its turns. Gateway usage rows stay (they belong to virtual keys). Answers 503 when the workers did not finish in time; the deletion goes on and a repeated DELETE waits for it.`,
        request: s.conversationDelete,
      },
      async (ctx, { params, query }) => {
        await conversations.delete(params.conversation_id, query.project_id);
        ok(ctx, {});
      },
    )
    .route<Validated<s.ConversationParams, ScopeQ, s.ConversationForkBody>>(
      {
        method: 'post',
        path: '/:conversation_id/fork',
        summary: 'Fork a conversation: a new one holding the transcript up to a message',
        description: `${BY_ID} Copies one agent's thread (its messages up to and including \`at_message_id\`, and the summaries that cover only those) into a new conversation with the same namespace and context, in one transaction. Runs and run events are not copied; the copied messages have no run. When that agent has a sandbox, its session's workspace is copied, as it is now, into the fork's session before the answer (whether the sandbox runs, stopped or is gone; none means an empty workspace); later writes in either do not show in the other. Answers the new conversation as GET does; 501 when the sandbox backend cannot copy a workspace (kubernetes), 502 when the copy failed, 503 when no worker copied it in time (no fork is made in these cases).`,
        request: s.conversationFork,
        response: s.conversationWithSessionsResponse,
      },
      async (ctx, { params, query, body }) => {
        const created = await forks.fork(params.conversation_id, query.project_id, body);
        ok(ctx, await conversations.get(created.id, created.project_id));
      },
    )
    .route<Validated<s.ConversationParams, ScopeQ & Page>>(
      {
        method: 'get',
        path: '/:conversation_id/threads',
        summary: "List a conversation's threads, newest first",
        description: BY_ID,
        request: s.threadList,
        response: s.threadListResponse,
      },
      async (ctx, { params, query }) =>
        ok(ctx, await conversations.listThreads(params.conversation_id, query.project_id, query)),
    );
  const threads = new ApiRouter('/api/agent-server/threads', 'Conversations')
    .access({ read: 'project:read', write: 'project:develop', project: THREAD_PROJECT })
    .route<Validated<{ id: string }, s.MessagePage>>(
      {
        method: 'get',
        path: '/:id/messages',
        summary: "List a thread's messages, oldest first",
        description: 'Page with `after` = the id of the last message received, and `limit`.',
        request: s.messageList,
        response: s.messageListResponse,
      },
      async (ctx, { params, query }) => ok(ctx, await conversations.listMessages(params.id, query)),
    )
    .route<Validated<{ id: string }, { project_id?: string }>>(
      {
        method: 'get',
        path: '/:id/summaries',
        summary: "List a thread's summaries, oldest first",
        description:
          "What the LLM summarizer wrote as the thread grew; each stands for the messages up to `through_message_id` in the model's context.",
        request: s.summaryList,
        response: s.summaryListResponse,
      },
      async (ctx, { params, query }) =>
        ok(ctx, await conversations.listSummaries(params.id, query.project_id)),
    );
  return [byId, threads];
}
