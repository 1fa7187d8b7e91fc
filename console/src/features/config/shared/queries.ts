import { useMutation, useQuery, useQueryClient, type QueryKey } from '@tanstack/react-query';
import { unwrap } from '../../../api/client.js';

/** A mutation that refreshes the given lists when it succeeds. */
export function useSaving<TVars, TResult>(keys: QueryKey[], fn: (vars: TVars) => Promise<TResult>) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: fn,
    onSuccess: () => Promise.all(keys.map((queryKey) => client.invalidateQueries({ queryKey }))),
  });
}

/** A call of the typed client, before `unwrap`. */
type Call = Promise<{ data?: unknown; error?: unknown; response: Response }>;

/**
 * The hooks of a resource that belongs to a project, from its routes' typed
 * calls: the list (the newest 200; waits for a project), create-or-update,
 * and delete. Saving or deleting refreshes the project's list.
 */
export function projectResource<T, Body>(
  name: string,
  calls: {
    list: (projectId: string) => Call;
    create: (projectId: string, body: Body) => Call;
    update: (id: string, body: Partial<Body>) => Call;
    remove: (id: string) => Call;
  },
) {
  const key = (projectId: string | undefined) => [name, projectId];
  return {
    key,
    useList: (projectId: string | undefined) =>
      useQuery({
        queryKey: key(projectId),
        enabled: Boolean(projectId),
        queryFn: () => unwrap<T[]>(calls.list(projectId!)),
      }),
    /** Updates `id`, or creates one when there is none (a create takes every required field). */
    useSave: (projectId: string, id: string | undefined) =>
      useSaving([key(projectId)], (body: Partial<Body>) =>
        unwrap<T>(id ? calls.update(id, body) : calls.create(projectId, body as Body)),
      ),
    useDelete: (projectId: string) => useSaving([key(projectId)], (id: string) => unwrap(calls.remove(id))),
  };
}
