import { Select, Switch, Text, Textarea, TextInput } from '@mantine/core';
import { api, unwrap } from '../../../api/client.js';
import type { Project } from '../../../api/types.js';
import { ResourceForm, useFields } from '../../../components/resource-form.js';
import { useVirtualKeys } from '../keys/queries.js';
import { useModels } from '../models/queries.js';
import { useSaving } from '../shared/queries.js';

const PROJECTS_KEY = ['projects'];

interface ProjectDraft {
  name: string;
  description: string;
  virtual_key_id: string | null;
  record_content: boolean;
  /** The memory store's embedding model; null: search by text only. */
  store_model_id: string | null;
}

/** The setting with the model chosen, keeping the dims and fields set through the API. */
function storeEmbeddingOf(
  modelId: string | null,
  before: Project['store_embedding'],
): { model_id: string; dims: number | null; fields: string[] | null } | null {
  if (!modelId) return null;
  return { model_id: modelId, dims: before?.dims ?? null, fields: before?.fields ?? null };
}

function useSaveProject(project: Project | undefined) {
  return useSaving([PROJECTS_KEY], (d: ProjectDraft) => {
    const body = {
      name: d.name.trim(),
      description: d.description || null,
      virtual_key_id: d.virtual_key_id,
      record_content: d.record_content,
    };
    if (!project) return unwrap<Project>(api.POST('/api/agent-server/projects', { body }));
    const store_embedding = storeEmbeddingOf(d.store_model_id, project.store_embedding);
    return unwrap<Project>(
      api.PATCH('/api/agent-server/projects/{id}', {
        params: { path: { id: project.id } },
        body: { ...body, store_embedding },
      }),
    );
  });
}

export function useDeleteProject() {
  return useSaving([PROJECTS_KEY], (id: string) =>
    unwrap(api.DELETE('/api/agent-server/projects/{id}', { params: { path: { id } } })),
  );
}

/** The memory store's embedding model: one of the project's models, or none; a new project has none yet. */
function StoreEmbeddingSelect({
  projectId,
  bind,
}: {
  projectId: string | undefined;
  bind: { value: string | null; onChange: (v: string | null) => void; error: string | undefined };
}) {
  const models = useModels(projectId);
  if (!projectId)
    return (
      <Text size="sm" c="dimmed">
        Memory store embedding: choose one of the project&apos;s models once it has some.
      </Text>
    );
  return (
    <Select
      label="Memory store embedding model"
      description="Embeds the memory store's items for semantic search (agents' memory tools, the Agent Protocol's store); none: search by text"
      placeholder={models.data?.length ? 'None: search by text' : 'No model yet: add one in Models'}
      clearable
      data={(models.data ?? []).map((m) => ({ value: m.id, label: `${m.name} (${m.model_id})` }))}
      {...bind}
    />
  );
}

/** Create or edit a project: its name, description, the virtual key its agents' model calls go through, its memory store's embedding model. */
export function ProjectForm({ project, onDone }: { project?: Project; onDone: (p: Project) => void }) {
  const keys = useVirtualKeys();
  const save = useSaveProject(project);
  const f = useFields<ProjectDraft>(
    () => ({
      name: project?.name ?? '',
      description: project?.description ?? '',
      virtual_key_id: project?.virtual_key_id ?? null,
      record_content: project?.record_content ?? false,
      store_model_id: project?.store_embedding?.model_id ?? null,
    }),
    save.error,
  );
  return (
    <ResourceForm
      onSubmit={() => save.mutate(f.values, { onSuccess: onDone })}
      save={save}
      placed={['name', 'description', 'virtual_key_id', 'record_content', 'store_embedding']}
      submitLabel={project ? 'Save project' : 'Create project'}
    >
      <TextInput label="Name" required {...f.text('name')} data-autofocus />
      <Textarea label="Description" autosize {...f.text('description')} />
      <Select
        label="Virtual key"
        description="Meters and limits this project's agents' model calls"
        placeholder="None"
        clearable
        data={(keys.data ?? []).map((k) => ({ value: k.id, label: k.name }))}
        {...f.value('virtual_key_id')}
      />
      <Switch
        label="Record content"
        description="Prompts, completions, tool arguments and results on this project's trace spans (deleted with their conversation)"
        checked={f.values.record_content}
        onChange={(e) => f.set({ record_content: e.currentTarget.checked })}
      />
      <StoreEmbeddingSelect projectId={project?.id} bind={f.value('store_model_id', 'store_embedding')} />
    </ResourceForm>
  );
}
