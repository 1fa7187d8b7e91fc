import { Button, Group, SegmentedControl, Input, Stack, TextInput } from '@mantine/core';
import { useState } from 'react';
import { ErrorAlert } from '../../../components/error-alert.js';
import type { McpServer } from '../../../api/types.js';
import { fieldError, fieldErrorUnder, unplacedError } from '../shared/form.js';
import { fromPairs, KeyValues, toPairs } from '../shared/key-values.js';
import { useSaveMcpServer } from './queries.js';

const PLACED = ['name', 'endpoint', 'transport', 'headers'];

/** Create or edit an MCP server: where it listens, how, and the headers it needs (stored encrypted). */
export function McpForm({
  projectId,
  server,
  onDone,
}: {
  projectId: string;
  server?: McpServer;
  onDone: () => void;
}) {
  const save = useSaveMcpServer(projectId, server?.id);
  const [name, setName] = useState(server?.name ?? '');
  const [endpoint, setEndpoint] = useState(server?.endpoint ?? '');
  const [transport, setTransport] = useState<string>(server?.transport ?? 'streamable_http');
  const [headers, setHeaders] = useState(toPairs(server?.headers));
  const err = save.error;
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate(
          {
            name: name.trim(),
            endpoint: endpoint.trim(),
            transport: transport as 'streamable_http' | 'sse',
            headers: fromPairs(headers),
          },
          { onSuccess: onDone },
        );
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
        <TextInput
          label="Endpoint"
          description="http(s) URL of the server; credentials in it read back as [redacted]"
          placeholder="https://mcp.example.com/mcp"
          required
          value={endpoint}
          onChange={(e) => setEndpoint(e.currentTarget.value)}
          error={fieldError(err, 'endpoint')}
        />
        <Input.Wrapper label="Transport" error={fieldError(err, 'transport')}>
          <div>
            <SegmentedControl
              aria-label="Transport"
              value={transport}
              onChange={setTransport}
              data={[
                { value: 'streamable_http', label: 'Streamable HTTP' },
                { value: 'sse', label: 'SSE' },
              ]}
            />
          </div>
        </Input.Wrapper>
        <KeyValues
          label="Headers"
          description="Sent with every request (e.g. Authorization); sensitive values read back as [redacted]"
          value={headers}
          onChange={setHeaders}
          error={fieldErrorUnder(err, 'headers')}
        />
        <ErrorAlert error={unplacedError(err, PLACED)} />
        <Group justify="flex-end">
          <Button variant="default" onClick={onDone}>
            Cancel
          </Button>
          <Button type="submit" loading={save.isPending}>
            {server ? 'Save MCP server' : 'Create MCP server'}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
