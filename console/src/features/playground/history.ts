import { useQuery } from '@tanstack/react-query';
import { api, ApiError, unwrap } from '../../api/client.js';
import type { Message, Run } from '../../api/types.js';

/** Turns shown when a conversation is reopened: the most recent ones (Sessions shows them all). */
export const HISTORY_TURNS = 50;
const MESSAGE_PAGE = 200;
const MAX_MESSAGE_PAGES = 20;

export interface HistoryTurn {
  runId: string;
  agentId: string | null;
  agentName: string | null;
  userText: string;
  createdAt: string;
}

/** A user message's text (content parts: their text, images as a placeholder). */
export function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((p: { type?: string; text?: string }) => (p.type === 'text' ? (p.text ?? '') : '[image]'))
      .join('\n');
  return content === undefined || content === null ? '' : JSON.stringify(content);
}

async function threadUserMessages(threadId: string, projectId: string): Promise<Message[]> {
  const out: Message[] = [];
  let after: string | undefined;
  for (let i = 0; i < MAX_MESSAGE_PAGES; i++) {
    const page = await unwrap<Message[]>(
      api.GET('/api/agent-server/threads/{id}/messages', {
        params: {
          path: { id: threadId },
          query: { project_id: projectId, limit: MESSAGE_PAGE, ...(after ? { after } : {}) },
        },
      }),
    );
    out.push(...page.filter((m) => m.role === 'user'));
    if (page.length < MESSAGE_PAGE) break;
    after = page.at(-1)?.id;
  }
  return out;
}

/**
 * A conversation's turns, oldest first: its runs, each with the user message
 * that started it (stored in the same statement as the run: same thread, same
 * created_at). An id the API does not know yet is a conversation not started.
 */
async function loadHistory(conversationId: string, projectId: string): Promise<HistoryTurn[]> {
  let runs: Run[];
  try {
    runs = await unwrap<Run[]>(
      api.GET('/api/agent-server/conversations/{conversation_id}/runs', {
        params: {
          path: { conversation_id: conversationId },
          query: { project_id: projectId, limit: HISTORY_TURNS },
        },
      }),
    );
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return [];
    throw err;
  }
  runs.reverse();
  const threads = [...new Set(runs.map((r) => r.thread_id).filter((t): t is string => Boolean(t)))];
  const byThread = new Map(
    await Promise.all(threads.map(async (t) => [t, await threadUserMessages(t, projectId)] as const)),
  );
  return runs.map((r, i) => {
    const msgs = byThread.get(r.thread_id ?? '') ?? [];
    const same = msgs.find((m) => m.created_at === r.created_at);
    // Fallback: the n-th run of a thread is its n-th user message (hidden corrections aside).
    const nth = runs.slice(0, i).filter((x) => x.thread_id === r.thread_id).length;
    const msg = same ?? msgs[nth];
    return {
      runId: r.run_id ?? '',
      agentId: r.agent_id ?? null,
      agentName: r.agent_name ?? null,
      userText: msg ? messageText(msg.content) : '',
      createdAt: r.created_at ?? '',
    };
  });
}

export function useHistory(conversationId: string | undefined, projectId: string | undefined) {
  return useQuery({
    queryKey: ['playground', 'history', projectId, conversationId],
    enabled: Boolean(conversationId && projectId),
    queryFn: () => loadHistory(conversationId!, projectId!),
  });
}

/** The conversation's stored context (template variables later turns keep); empty before its first turn. */
export function useConversationContext(conversationId: string | undefined, projectId: string | undefined) {
  return useQuery({
    queryKey: ['playground', 'conversation', projectId, conversationId],
    enabled: Boolean(conversationId && projectId),
    queryFn: async () => {
      try {
        const c = await unwrap<{ context?: Record<string, unknown> }>(
          api.GET('/api/agent-server/conversations/{conversation_id}', {
            params: { path: { conversation_id: conversationId! }, query: { project_id: projectId! } },
          }),
        );
        return c.context ?? {};
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) return {};
        throw err;
      }
    },
  });
}
