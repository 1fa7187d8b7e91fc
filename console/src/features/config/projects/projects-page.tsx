import { Button, Code, Group, Select, Stack, Table, Textarea, TextInput } from '@mantine/core';
import { useState } from 'react';
import { api, unwrap } from '../../../api/client.js';
import { useProject, useProjects } from '../../../app/project.js';
import { Empty } from '../../../components/empty.js';
import { ErrorAlert } from '../../../components/error-alert.js';
import { Loading } from '../../../components/loading.js';
import { useVirtualKeys } from '../keys/queries.js';
import type { Project } from '../../../api/types.js';
import { RowActions } from '../shared/row-actions.js';
import { EditModal } from '../shared/edit-modal.js';
import { fieldError, unplacedError } from '../shared/form.js';
import { PageHeader } from '../shared/page-header.js';
import { useSaving } from '../shared/queries.js';

const KEY = ['projects'];

function ProjectForm({ project, onDone }: { project?: Project; onDone: (p: Project) => void }) {
  const keys = useVirtualKeys();
  const [name, setName] = useState(project?.name ?? '');
  const [description, setDescription] = useState(project?.description ?? '');
  const [keyId, setKeyId] = useState<string | null>(project?.virtual_key_id ?? null);
  const save = useSaving([KEY], () => {
    const body = { name: name.trim(), description: description || null, virtual_key_id: keyId };
    return project
      ? unwrap<Project>(
          api.PATCH('/api/agent-server/projects/{id}', { params: { path: { id: project.id } }, body }),
        )
      : unwrap<Project>(api.POST('/api/agent-server/projects', { body }));
  });
  const err = save.error;
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate(undefined, { onSuccess: onDone });
      }}
    >
      <Stack>
        <TextInput
          label="Name"
          required
          value={name}
          onChange={(e) => setName(e.currentTarget.value)}
          error={fieldError(err, 'name')}
          data-autofocus
        />
        <Textarea
          label="Description"
          autosize
          value={description}
          onChange={(e) => setDescription(e.currentTarget.value)}
          error={fieldError(err, 'description')}
        />
        <Select
          label="Virtual key"
          description="Meters and limits this project's agents' model calls"
          placeholder="None"
          clearable
          data={(keys.data ?? []).map((k) => ({ value: k.id, label: k.name }))}
          value={keyId}
          onChange={setKeyId}
          error={fieldError(err, 'virtual_key_id')}
        />
        <ErrorAlert error={unplacedError(err, ['name', 'description', 'virtual_key_id'])} />
        <Group justify="flex-end">
          <Button type="submit" loading={save.isPending}>
            {project ? 'Save project' : 'Create project'}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

/** Projects: the tenants models, prompts, schemas, MCP servers and agents belong to. */
export function ProjectsPage() {
  const list = useProjects();
  const { setProjectId } = useProject();
  const del = useSaving([KEY], (id: string) =>
    unwrap(api.DELETE('/api/agent-server/projects/{id}', { params: { path: { id } } })),
  );
  const [editing, setEditing] = useState<Project | 'new' | null>(null);
  return (
    <>
      <PageHeader title="Projects" action={<Button onClick={() => setEditing('new')}>New project</Button>}>
        Tenants: models, prompts, schemas, MCP servers, agents and conversations belong to one project. The
        picker at the top chooses the project the pages work in.
      </PageHeader>
      {list.isLoading && <Loading what="Loading projects" />}
      <ErrorAlert error={list.error} />
      {list.data?.length === 0 && (
        <Empty title="No project yet">Create a project to start configuring agents.</Empty>
      )}
      {!!list.data?.length && (
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Description</Table.Th>
              <Table.Th>Id</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data.map((p) => (
              <Table.Tr key={p.id}>
                <Table.Td>{p.name}</Table.Td>
                <Table.Td>{p.description ?? '—'}</Table.Td>
                <Table.Td>
                  <Code>{p.id}</Code>
                </Table.Td>
                <Table.Td>
                  <RowActions
                    name={p.name}
                    onEdit={() => setEditing(p)}
                    onDelete={() => del.mutateAsync(p.id)}
                  />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <EditModal editing={editing} what="project" onClose={() => setEditing(null)} size="md">
        {(item) => (
          <ProjectForm
            project={item}
            onDone={(p) => {
              if (editing === 'new') setProjectId(p.id);
              setEditing(null);
            }}
          />
        )}
      </EditModal>
    </>
  );
}
