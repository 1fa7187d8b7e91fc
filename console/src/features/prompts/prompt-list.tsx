import { Anchor, Badge, Button, Modal, Text } from '@mantine/core';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import type { Prompt } from '../../api/types.js';
import { Empty } from '../../components/empty.js';
import { ResourceTable, type Column } from '../../components/resource-table.js';
import { PromptVersionForm } from './new-prompt-form.js';
import { usePrompts } from './queries.js';
import { useCan } from '../../app/auth.js';

const COLUMNS: Column<Prompt>[] = [
  {
    header: 'Name',
    cell: (p) => (
      <Anchor component={Link} to={`/prompts/${encodeURIComponent(p.name)}`}>
        {p.name}
      </Anchor>
    ),
  },
  { header: 'Versions', cell: (p) => p.latest_version },
  {
    header: 'production',
    cell: (p) =>
      p.labels.production ? (
        <Badge color="green">v{p.labels.production}</Badge>
      ) : (
        <Text size="sm" c="dimmed">
          not set
        </Text>
      ),
  },
  { header: 'latest', cell: (p) => <Badge color="blue">v{p.labels.latest}</Badge> },
  { header: 'Updated', cell: (p) => new Date(p.updated_at).toLocaleString() },
];

/** The project's prompts, with where their labels sit. */
export function PromptList({ projectId }: { projectId: string }) {
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  const develops = useCan()('develop');
  return (
    <>
      {develops && (
        <Button onClick={() => setCreating(true)} mb="md">
          New prompt
        </Button>
      )}
      <ResourceTable
        query={usePrompts(projectId)}
        loading="Loading prompts"
        empty={
          <Empty title="No prompt in this project">
            Create a prompt: a template with {'{{variables}}'}. Agents use its latest or production version.
          </Empty>
        }
        columns={COLUMNS}
      />
      <Modal opened={creating} onClose={() => setCreating(false)} title="New prompt" size="xl">
        {creating && (
          <PromptVersionForm
            projectId={projectId}
            onDone={(name) => {
              setCreating(false);
              void navigate(`/prompts/${encodeURIComponent(name)}`);
            }}
          />
        )}
      </Modal>
    </>
  );
}
