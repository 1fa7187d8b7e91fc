import { Select, Switch, Textarea, TextInput } from '@mantine/core';
import { api, unwrap } from '../../../api/client.js';
import type { Project } from '../../../api/types.js';
import { ResourceForm, useFields } from '../../../components/resource-form.js';
import { useVirtualKeys } from '../keys/queries.js';
import { useSaving } from '../shared/queries.js';

const PROJECTS_KEY = ['projects'];

interface ProjectDraft {
  name: string;
  description: string;
  virtual_key_id: string | null;
  record_content: boolean;
}

function useSaveProject(id: string | undefined) {
  return useSaving([PROJECTS_KEY], (d: ProjectDraft) => {
    const body = {
      name: d.name.trim(),
      description: d.description || null,
      virtual_key_id: d.virtual_key_id,
      record_content: d.record_content,
    };
    return id
      ? unwrap<Project>(api.PATCH('/api/agent-server/projects/{id}', { params: { path: { id } }, body }))
      : unwrap<Project>(api.POST('/api/agent-server/projects', { body }));
  });
}

export function useDeleteProject() {
  return useSaving([PROJECTS_KEY], (id: string) =>
    unwrap(api.DELETE('/api/agent-server/projects/{id}', { params: { path: { id } } })),
  );
}

/** Create or edit a project: its name, description, and the virtual key its agents' model calls go through. */
export function ProjectForm({ project, onDone }: { project?: Project; onDone: (p: Project) => void }) {
  const keys = useVirtualKeys();
  const save = useSaveProject(project?.id);
  const f = useFields<ProjectDraft>(
    () => ({
      name: project?.name ?? '',
      description: project?.description ?? '',
      virtual_key_id: project?.virtual_key_id ?? null,
      record_content: project?.record_content ?? false,
    }),
    save.error,
  );
  return (
    <ResourceForm
      onSubmit={() => save.mutate(f.values, { onSuccess: onDone })}
      save={save}
      placed={['name', 'description', 'virtual_key_id', 'record_content']}
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
    </ResourceForm>
  );
}
