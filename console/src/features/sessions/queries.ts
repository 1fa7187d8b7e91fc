import {
  keepPreviousData,
  useInfiniteQuery,
  useMutation,
  useQuery,
  useQueryClient,
} from '@tanstack/react-query';
import { api, unwrap } from '../../api/client.js';
import type { Conversation, ConversationDetail, Message, Run, Summary, Thread } from '../../api/types.js';

export const PAGE = 50;
const MESSAGE_PAGE = 200;

export interface ConversationFilters {
  agentId?: string;
  namespace?: string;
  offset: number;
}

export function useConversations(projectId: string | undefined, f: ConversationFilters) {
  return useQuery({
    queryKey: ['conversations', projectId, f],
    enabled: Boolean(projectId),
    placeholderData: keepPreviousData,
    queryFn: () =>
      unwrap<Conversation[]>(
        api.GET('/api/agent-server/conversations', {
          params: {
            query: {
              project_id: projectId!,
              ...(f.agentId ? { agent_id: f.agentId } : {}),
              ...(f.namespace ? { namespace: f.namespace } : {}),
              limit: PAGE,
              offset: f.offset,
            },
          },
        }),
      ),
  });
}

export function useConversation(id: string, projectId: string | undefined) {
  return useQuery({
    queryKey: ['conversation', projectId, id],
    enabled: Boolean(projectId),
    queryFn: () =>
      unwrap<ConversationDetail>(
        api.GET('/api/agent-server/conversations/{conversation_id}', {
          params: { path: { conversation_id: id }, query: { project_id: projectId! } },
        }),
      ),
  });
}

export function useThreads(id: string, projectId: string | undefined) {
  return useQuery({
    queryKey: ['threads', projectId, id],
    enabled: Boolean(projectId),
    queryFn: () =>
      unwrap<Thread[]>(
        api.GET('/api/agent-server/conversations/{conversation_id}/threads', {
          params: { path: { conversation_id: id }, query: { project_id: projectId!, limit: 200 } },
        }),
      ),
  });
}

/** While a run is queued, running or paused, its conversation is polled. */
export const LIVE = new Set([
  'queued',
  'running',
  'awaiting_approval',
  'awaiting_budget',
  'awaiting_decision',
  'awaiting_authorization',
  'awaiting_input',
]);

export function useConversationRuns(id: string, projectId: string | undefined, offset: number) {
  return useQuery({
    queryKey: ['runs', 'conversation', projectId, id, offset],
    enabled: Boolean(projectId),
    placeholderData: keepPreviousData,
    refetchInterval: (q) => (q.state.data?.some((r) => LIVE.has(r.status ?? '')) ? 2000 : false),
    queryFn: () =>
      unwrap<Run[]>(
        api.GET('/api/agent-server/conversations/{conversation_id}/runs', {
          params: { path: { conversation_id: id }, query: { project_id: projectId!, limit: PAGE, offset } },
        }),
      ),
  });
}

/** A thread's messages, oldest first, paged with `after` (the last id seen). */
export function useMessages(threadId: string, live: boolean) {
  return useInfiniteQuery({
    queryKey: ['messages', threadId],
    refetchInterval: live ? 2000 : false,
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last: Message[]) => (last.length === MESSAGE_PAGE ? last.at(-1)?.id : undefined),
    queryFn: ({ pageParam }) =>
      unwrap<Message[]>(
        api.GET('/api/agent-server/threads/{id}/messages', {
          params: {
            path: { id: threadId },
            query: { limit: MESSAGE_PAGE, ...(pageParam ? { after: pageParam } : {}) },
          },
        }),
      ),
  });
}

/** A thread's summaries, oldest first (the summarizer writes them as a conversation grows). */
export function useSummaries(threadId: string, live: boolean) {
  return useQuery({
    queryKey: ['summaries', threadId],
    refetchInterval: live ? 2_000 : false,
    queryFn: () =>
      unwrap<Summary[]>(
        api.GET('/api/agent-server/threads/{id}/summaries', { params: { path: { id: threadId } } }),
      ),
  });
}

/**
 * Cancels a run in any state: `interrupt` keeps what it produced, `rollback`
 * removes its messages and summaries from the conversation. The run lists,
 * messages and summaries are read again once it has ended.
 */
export function useCancelRun(runId: string, projectId: string | undefined) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (action: 'interrupt' | 'rollback') =>
      unwrap<Run>(
        api.POST('/api/agent-server/runs/{run_id}/cancel', {
          params: { path: { run_id: runId }, query: projectId ? { project_id: projectId } : {} },
          body: { action },
        }),
      ),
    onSuccess: () =>
      Promise.all(['runs', 'messages', 'summaries'].map((k) => client.invalidateQueries({ queryKey: [k] }))),
  });
}

/**
 * Forks the conversation at a message: a new conversation holding the
 * transcript up to and including it (the message's thread), answered like
 * GET /conversations/{id}. The conversation list is read again.
 */
export function useForkConversation(conversationId: string, projectId: string | undefined) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (atMessageId: string) =>
      unwrap<ConversationDetail>(
        api.POST('/api/agent-server/conversations/{conversation_id}/fork', {
          params: {
            path: { conversation_id: conversationId },
            query: projectId ? { project_id: projectId } : {},
          },
          body: { at_message_id: atMessageId },
        }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: ['conversations'] }),
  });
}
