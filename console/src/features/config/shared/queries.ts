import { useMutation, useQueryClient, type QueryKey } from '@tanstack/react-query';

/** A mutation that refreshes the given lists when it succeeds. */
export function useSaving<TVars, TResult>(keys: QueryKey[], fn: (vars: TVars) => Promise<TResult>) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: fn,
    onSuccess: () => Promise.all(keys.map((queryKey) => client.invalidateQueries({ queryKey }))),
  });
}
