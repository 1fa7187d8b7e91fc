import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client.js';
import type { Eval, EvalBody, EvalResult } from '../../api/types.js';

/** While an eval is queued or running, its page and the list are polled. */
export const EVAL_LIVE = new Set(['queued', 'running']);
const POLL_MS = 1_500;

export function useEvals(projectId: string | undefined) {
  return useQuery({
    queryKey: ['evals', projectId],
    enabled: Boolean(projectId),
    refetchInterval: (q) => (q.state.data?.some((e) => EVAL_LIVE.has(e.status ?? '')) ? POLL_MS : false),
    queryFn: () =>
      unwrap<Eval[]>(
        api.GET('/api/agent-server/evals', { params: { query: { project_id: projectId!, limit: 100 } } }),
      ),
  });
}

export function useEval(id: string) {
  return useQuery({
    queryKey: ['eval', id],
    refetchInterval: (q) => (EVAL_LIVE.has(q.state.data?.status ?? 'queued') ? POLL_MS : false),
    queryFn: () => unwrap<Eval>(api.GET('/api/agent-server/evals/{id}', { params: { path: { id } } })),
  });
}

/**
 * The per-turn rows, read again whenever the eval's progress (`done`, from
 * its polled view) or status moves: the last turns are never missed when the
 * eval ends between two polls.
 */
export function useEvalResults(id: string, done: number, status: string | undefined) {
  return useQuery({
    queryKey: ['eval-results', id, done, status],
    placeholderData: keepPreviousData,
    queryFn: () =>
      unwrap<EvalResult[]>(api.GET('/api/agent-server/evals/{id}/results', { params: { path: { id } } })),
  });
}

export function useStartEval(projectId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: EvalBody) =>
      unwrap<Eval>(
        api.POST('/api/agent-server/evals', { params: { query: { project_id: projectId } }, body }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: ['evals'] }),
  });
}

export function useCancelEval(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap<Eval>(api.DELETE('/api/agent-server/evals/{id}', { params: { path: { id } } })),
    onSuccess: (ev) => {
      client.setQueryData(['eval', id], ev);
      return client.invalidateQueries({ queryKey: ['evals'] });
    },
  });
}
