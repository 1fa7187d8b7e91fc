import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client.js';
import type { Agent, ConverseBody, JsonSchemaDoc, PromptVersion, Run } from '../../api/types.js';
import { addEvent, EMPTY, handOff, runEventsKey, toEvent } from './run-events.js';
import { openSse } from './sse.js';

/** One agent by id, in whichever project it is (a deep link may name another project's agent). */
export function useAgent(agentId: string | undefined) {
  return useQuery({
    queryKey: ['playground', 'agent', agentId],
    enabled: Boolean(agentId),
    retry: false,
    queryFn: () =>
      unwrap<Agent>(api.GET('/api/agent-server/agents/{id}', { params: { path: { id: agentId! } } })),
  });
}

/** A prompt's versions with their labels (to say which version a turn used, and which one the label points at). */
export function usePromptVersions(projectId: string | undefined, name: string | undefined) {
  return useQuery({
    queryKey: ['playground', 'prompt-versions', projectId, name],
    enabled: Boolean(projectId && name),
    queryFn: () =>
      unwrap<PromptVersion[]>(
        api.GET('/api/agent-server/prompts/{name}/versions', {
          params: { path: { name: name! }, query: { project_id: projectId!, limit: 200 } },
        }),
      ),
  });
}

export function useSchema(schemaId: string | null | undefined) {
  return useQuery({
    queryKey: ['playground', 'schema', schemaId],
    enabled: Boolean(schemaId),
    staleTime: 60_000,
    queryFn: () =>
      unwrap<JsonSchemaDoc>(
        api.GET('/api/agent-server/schemas/{id}', { params: { path: { id: schemaId! } } }),
      ),
  });
}

/** A run's view (tokens, cost, duration, prompt version, trace): fetched again when its status changes. */
export function useRun(runId: string, projectId: string | undefined, status: string, enabled: boolean) {
  return useQuery({
    queryKey: ['playground', 'run', runId, status],
    enabled: enabled && Boolean(projectId),
    staleTime: Infinity,
    queryFn: () =>
      unwrap<Run>(
        api.GET('/api/agent-server/runs/{run_id}', {
          params: { path: { run_id: runId }, query: { project_id: projectId! } },
        }),
      ),
  });
}

/** Ids the API takes for conversation_id and message_id (letters, digits and . _ : -). */
export function newId(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(9));
  return `${prefix}-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/**
 * Sends a message with `stream: true`. Resolves with the run id once
 * `run.created` arrives; the rest of the stream is handed to the run's
 * events query (which resumes from the API if it is ever cut).
 */
export function useSend(projectId: string | undefined) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (body: Omit<ConverseBody, 'stream'>): Promise<{ runId: string }> => {
      const controller = new AbortController();
      const frames = await openSse(
        `/api/agent-server/converse?project_id=${encodeURIComponent(projectId!)}`,
        {
          method: 'POST',
          body: { ...body, stream: true },
          signal: controller.signal,
        },
      );
      for (;;) {
        const next = await frames.next();
        if (next.done) throw new Error('The stream ended before the run was created');
        const ev = toEvent(next.value);
        const runId = ev?.data.run_id;
        if (!ev || typeof runId !== 'string') continue;
        client.setQueryData(runEventsKey(runId), addEvent(EMPTY, ev));
        handOff(runId, frames, () => controller.abort());
        return { runId };
      }
    },
    // The conversation has a new turn: its history (as a page coming back reads it) is out of date.
    onSuccess: async (_data, body) => {
      for (const what of ['history', 'conversation'])
        await client.invalidateQueries({ queryKey: ['playground', what, projectId, body.conversation_id] });
    },
  });
}

/** Approves or declines paused tool calls; the run's stream shows the turn going on. */
/**
 * Cancels the turn, keeping what it produced (`interrupt`): the model call or
 * tool call is stopped on the server, and the stream ends with `run.cancelled`.
 */
export function useCancel(runId: string, projectId: string | undefined) {
  return useMutation({
    mutationFn: () =>
      unwrap<Run>(
        api.POST('/api/agent-server/runs/{run_id}/cancel', {
          params: { path: { run_id: runId }, query: { project_id: projectId! } },
          body: { action: 'interrupt' },
        }),
      ),
  });
}

export function useDecide(runId: string, projectId: string | undefined) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (d: { approve: string[]; reject: string[] }) =>
      unwrap<Run>(
        api.POST('/api/agent-server/runs/{run_id}/approvals', {
          params: { path: { run_id: runId }, query: { project_id: projectId! } },
          body: { approved_call_ids: d.approve, rejected_call_ids: d.reject },
        }),
      ),
    onSuccess: (run) => client.setQueryData(['playground', 'run', runId, 'awaiting_approval'], run),
  });
}
