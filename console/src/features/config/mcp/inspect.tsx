import { Accordion, Anchor, Code, Stack, Text } from '@mantine/core';
import { ApiError } from '../../../api/client.js';
import { Empty } from '../../../components/empty.js';
import { ErrorAlert } from '../../../components/error-alert.js';
import { Loading } from '../../../components/loading.js';
import type { McpServer } from '../../../api/types.js';
import { useInspect } from './queries.js';

/** The tools the server lists right now, with their input schemas. */
export function InspectTools({ server }: { server: McpServer }) {
  const inspect = useInspect(server.id, true);
  if (inspect.isLoading) return <Loading what={`Connecting to ${server.name}`} />;
  if (inspect.error) return <InspectError error={inspect.error} />;
  const tools = inspect.data?.tools ?? [];
  if (!tools.length)
    return <Empty title="No tools">The server answered but lists no tools: check its configuration.</Empty>;
  return (
    <Stack gap="xs">
      <Text size="sm" c="dimmed">
        {tools.length} tool{tools.length === 1 ? '' : 's'}; use these names in an agent&apos;s tool filters.
      </Text>
      <Accordion variant="separated">
        {tools.map((t) => (
          <Accordion.Item key={t.name} value={t.name}>
            <Accordion.Control>
              <Code>{t.name}</Code>{' '}
              <Text span size="sm" c="dimmed">
                {t.description}
              </Text>
            </Accordion.Control>
            <Accordion.Panel>
              <Code block>{JSON.stringify(t.input_schema, null, 2)}</Code>
            </Accordion.Panel>
          </Accordion.Item>
        ))}
      </Accordion>
    </Stack>
  );
}

/** Why the server could not be listed; a server that wants authorization gives the page to open. */
function InspectError({ error }: { error: unknown }) {
  const url =
    error instanceof ApiError && typeof error.details.authorization_url === 'string'
      ? error.details.authorization_url
      : undefined;
  return (
    <Stack gap="xs">
      <ErrorAlert error={error} />
      {url && (
        <Anchor href={url} target="_blank" rel="noopener" size="sm">
          Authorize, then inspect again
        </Anchor>
      )}
    </Stack>
  );
}
