import { Anchor, Badge, Button, Modal, Table, Text } from '@mantine/core';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { Empty } from '../../components/empty.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { Loading } from '../../components/loading.js';
import { PromptVersionForm } from './new-prompt-form.js';
import { usePrompts } from './queries.js';

/** The project's prompts, with where their labels sit. */
export function PromptList({ projectId }: { projectId: string }) {
  const list = usePrompts(projectId);
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  return (
    <>
      <Button onClick={() => setCreating(true)} mb="md">
        New prompt
      </Button>
      {list.isLoading && <Loading what="Loading prompts" />}
      <ErrorAlert error={list.error} />
      {list.data?.length === 0 && (
        <Empty title="No prompt in this project">
          Create a prompt: a template with {'{{variables}}'}. Agents use its latest or production version.
        </Empty>
      )}
      {!!list.data?.length && (
        <Table striped highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Versions</Table.Th>
              <Table.Th>production</Table.Th>
              <Table.Th>latest</Table.Th>
              <Table.Th>Updated</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data.map((p) => (
              <Table.Tr key={p.id}>
                <Table.Td>
                  <Anchor component={Link} to={`/prompts/${encodeURIComponent(p.name)}`}>
                    {p.name}
                  </Anchor>
                </Table.Td>
                <Table.Td>{p.latest_version}</Table.Td>
                <Table.Td>
                  {p.labels.production ? (
                    <Badge color="green">v{p.labels.production}</Badge>
                  ) : (
                    <Text size="sm" c="dimmed">
                      not set
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  <Badge color="blue">v{p.labels.latest}</Badge>
                </Table.Td>
                <Table.Td>{new Date(p.updated_at).toLocaleString()}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
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
