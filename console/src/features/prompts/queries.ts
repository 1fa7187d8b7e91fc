import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client.js';
import type { LabelMove, NewPrompt, Prompt, PromptLabel as Label, PromptVersion } from '../../api/types.js';

export const promptsKey = (projectId: string | undefined) => ['prompts', projectId];
const versionsKey = (projectId: string, name: string) => ['prompt-versions', projectId, name];

/** The project's prompts (the newest 200): for the prompts page, and as choices on others. */
export function usePrompts(projectId: string | undefined) {
  return useQuery({
    queryKey: promptsKey(projectId),
    enabled: Boolean(projectId),
    queryFn: () =>
      unwrap<Prompt[]>(
        api.GET('/api/agent-server/prompts', { params: { query: { project_id: projectId!, limit: 200 } } }),
      ),
  });
}

export function usePrompt(projectId: string, name: string) {
  return useQuery({
    queryKey: ['prompt', projectId, name],
    queryFn: () =>
      unwrap<Prompt>(
        api.GET('/api/agent-server/prompts/by-name', { params: { query: { project_id: projectId, name } } }),
      ),
  });
}

/** Every version, newest first (paged through: a prompt may have more than one page of them). */
export function useVersions(projectId: string, name: string) {
  return useQuery({
    queryKey: versionsKey(projectId, name),
    queryFn: async () => {
      const all: PromptVersion[] = [];
      for (let offset = 0; ; offset += 200) {
        const page = await unwrap<PromptVersion[]>(
          api.GET('/api/agent-server/prompts/{name}/versions', {
            params: { path: { name }, query: { project_id: projectId, limit: 200, offset } },
          }),
        );
        all.push(...page);
        if (page.length < 200) return all;
      }
    },
  });
}

/** Who moved the prompt's labels, newest first (the newest 200 moves). */
export function useLabelHistory(projectId: string, name: string) {
  return useQuery({
    queryKey: ['prompt-label-history', projectId, name],
    queryFn: () =>
      unwrap<LabelMove[]>(
        api.GET('/api/agent-server/prompts/{name}/label-history', {
          params: { path: { name }, query: { project_id: projectId, limit: 200 } },
        }),
      ),
  });
}

function useInvalidatePrompt(projectId: string) {
  const client = useQueryClient();
  return () =>
    Promise.all([
      client.invalidateQueries({ queryKey: promptsKey(projectId) }),
      client.invalidateQueries({ queryKey: ['prompt', projectId] }),
      client.invalidateQueries({ queryKey: ['prompt-versions', projectId] }),
      client.invalidateQueries({ queryKey: ['prompt-label-history', projectId] }),
    ]);
}

export function useCreatePrompt(projectId: string) {
  const onSuccess = useInvalidatePrompt(projectId);
  return useMutation({
    mutationFn: (body: NewPrompt) =>
      unwrap<Prompt>(
        api.POST('/api/agent-server/prompts', { params: { query: { project_id: projectId } }, body }),
      ),
    onSuccess,
  });
}

export function useCreateVersion(projectId: string, name: string) {
  const onSuccess = useInvalidatePrompt(projectId);
  return useMutation({
    mutationFn: (body: Omit<NewPrompt, 'name'>) =>
      unwrap<PromptVersion>(
        api.POST('/api/agent-server/prompts/{name}/versions', {
          params: { path: { name }, query: { project_id: projectId } },
          body,
        }),
      ),
    onSuccess,
  });
}

export function useMoveLabel(projectId: string, name: string) {
  const onSuccess = useInvalidatePrompt(projectId);
  return useMutation({
    mutationFn: ({ version, label }: { version: number; label: Label }) =>
      unwrap<PromptVersion>(
        api.PATCH('/api/agent-server/prompts/{name}/versions/{version}', {
          params: { path: { name, version }, query: { project_id: projectId } },
          body: { label },
        }),
      ),
    onSuccess,
  });
}

export function useDeletePrompt(projectId: string) {
  const onSuccess = useInvalidatePrompt(projectId);
  return useMutation({
    mutationFn: (name: string) =>
      unwrap(
        api.DELETE('/api/agent-server/prompts/{name}', {
          params: { path: { name }, query: { project_id: projectId } },
        }),
      ),
    onSuccess,
  });
}
