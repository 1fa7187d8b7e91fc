import { Alert, Stack } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../api/client.js';
import type { AgentCheckBody, AgentWarning } from '../../../api/types.js';
import { bodyOf, type AgentDraft } from './draft.js';

/** The draft's fields the warnings depend on; the check runs again only when one of them changes. */
function checked(d: AgentDraft): AgentCheckBody {
  const b = bodyOf(d);
  return {
    model_id: b.model_id,
    prompt_id: b.prompt_id,
    prompt_label: b.prompt_label,
    summarizer_type: b.summarizer_type,
    llm_summarizer_model_id: b.llm_summarizer_model_id,
    llm_summarizer_prompt_id: b.llm_summarizer_prompt_id,
    llm_summarizer_prompt_label: b.llm_summarizer_prompt_label,
    sandbox: { enabled: d.sandbox.enabled },
  };
}

/**
 * What the API would warn the agent about, asked while the form is filled in
 * (POST /agents/check saves nothing): the same checks as the saved agent's
 * `warnings`, told before its first turn rather than by it.
 */
export function useAgentWarnings(projectId: string, draft: AgentDraft) {
  const body = checked(draft);
  return useQuery({
    queryKey: ['agent-check', projectId, body],
    queryFn: () =>
      unwrap<{ warnings?: AgentWarning[] }>(
        api.POST('/api/agent-server/agents/check', { params: { query: { project_id: projectId } }, body }),
      ),
    select: (data) => data.warnings ?? [],
    placeholderData: keepPreviousData,
  });
}

const isAbout = (w: AgentWarning, fields: readonly string[]) =>
  fields.some((f) => w.field === f || w.field.startsWith(`${f}.`));

/** Where the form shows each warning: in the section of its field. */
export const WARNED_IN = {
  agent: ['model_id', 'prompt_id', 'prompt_label'],
  summarizer: ['llm_summarizer_model_id', 'llm_summarizer_prompt_id', 'llm_summarizer_prompt_label'],
  sandbox: ['sandbox'],
} as const;

/** The warnings about these fields (a field and anything under it); without `fields`, those no section shows. */
export function Warnings({ of, fields }: { of: AgentWarning[]; fields?: readonly string[] }) {
  const placed = Object.values(WARNED_IN).flat();
  const mine = of.filter((w) => (fields ? isAbout(w, fields) : !isAbout(w, placed)));
  if (mine.length === 0) return null;
  return (
    <Stack gap="xs" mt="sm">
      {mine.map((w) => (
        <Alert key={w.message} color="yellow" title={`Warning: ${w.field}`} role="status">
          {w.message}
        </Alert>
      ))}
    </Stack>
  );
}
