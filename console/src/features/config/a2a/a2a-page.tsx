import { Button, Code, Modal, Stack, Table, Text } from '@mantine/core';
import { useState } from 'react';
import type { A2aAgent } from '../../../api/types.js';
import { Empty } from '../../../components/empty.js';
import { ErrorAlert } from '../../../components/error-alert.js';
import { Loading } from '../../../components/loading.js';
import { AuthorizationActions, AuthorizationBadge } from '../shared/authorization.js';
import { NeedProject } from '../shared/need-project.js';
import { ResourcePage } from '../shared/resource-page.js';
import { useCan } from '../../../app/auth.js';
import { A2aForm } from './a2a-form.js';
import { a2aAuthorization, useA2aAgents, useDeleteA2aAgent, useInspectA2a } from './queries.js';

/** The card's skills, each with the tool name an agent's model is offered. */
function InspectSkills({ agent }: { agent: A2aAgent }) {
  const inspect = useInspectA2a(agent.id, true);
  if (inspect.isLoading) return <Loading what={`Reading the card of ${agent.name}`} />;
  if (inspect.error) return <ErrorAlert error={inspect.error} />;
  const skills = inspect.data?.skills ?? [];
  if (!skills.length) return <Empty title="No skills">The card lists no skills.</Empty>;
  return (
    <Stack gap="xs">
      <Text size="sm" c="dimmed">
        {inspect.data?.name} {inspect.data?.version}: {inspect.data?.description}. Use the skill ids in an
        agent&apos;s tool filters.
      </Text>
      <Table>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Skill</Table.Th>
            <Table.Th>Tool</Table.Th>
            <Table.Th>Description</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {skills.map((s) => (
            <Table.Tr key={s.id}>
              <Table.Td>
                <Code>{s.id}</Code>
              </Table.Td>
              <Table.Td>
                <Code>{s.tool}</Code>
              </Table.Td>
              <Table.Td>{s.description}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  );
}

function A2aAgents({ projectId }: { projectId: string }) {
  const [inspecting, setInspecting] = useState<A2aAgent | null>(null);
  const can = useCan();
  return (
    <ResourcePage<A2aAgent>
      need="develop"
      title="A2A agents"
      what="A2A agent"
      intro="Remote agents speaking A2A that this project's agents may call: each skill on the agent's card is a tool. Authorize one whose card asks for OAuth sign-in."
      query={useA2aAgents(projectId)}
      empty={{
        title: 'No A2A agent in this project',
        body: 'Add a remote agent by its card URL, inspect it to list its skills, then give it to an agent.',
      }}
      columns={[
        { header: 'Card', cell: (a) => <Code>{a.card_url}</Code> },
        { header: 'Headers', cell: (a) => Object.keys(a.headers).join(', ') || '—' },
        {
          header: 'Authorization',
          cell: (a) => <AuthorizationBadge target={a} noun={a2aAuthorization.noun} />,
        },
      ]}
      remove={useDeleteA2aAgent(projectId)}
      rowExtras={(a) =>
        can('develop') && (
          <>
            <AuthorizationActions projectId={projectId} target={a} calls={a2aAuthorization} />
            <Button
              size="compact-sm"
              variant="light"
              onClick={() => setInspecting(a)}
              aria-label={`Inspect ${a.name}`}
            >
              Inspect
            </Button>
          </>
        )
      }
      form={(item, close) => <A2aForm projectId={projectId} item={item} onDone={close} />}
    >
      <Modal
        opened={inspecting !== null}
        onClose={() => setInspecting(null)}
        title={`Skills of ${inspecting?.name ?? ''}`}
        size="xl"
      >
        {inspecting && <InspectSkills agent={inspecting} />}
      </Modal>
    </ResourcePage>
  );
}

export function A2aPage() {
  return <NeedProject>{(p) => <A2aAgents key={p.id} projectId={p.id} />}</NeedProject>;
}
