import { Input, SegmentedControl, TextInput } from '@mantine/core';
import type { McpServer, McpServerBody } from '../../../api/types.js';
import { ResourceForm, useFields, type ItemFormProps } from '../../../components/resource-form.js';
import { fromPairs, KeyValues, toPairs } from '../shared/key-values.js';
import { OAuthFields, oauthBody, oauthDraft } from '../shared/oauth-fields.js';
import { useSaveMcpServer } from './queries.js';

const PLACED = ['name', 'endpoint', 'transport', 'headers', 'oauth', 'per_user_tokens'];
const TRANSPORTS = [
  { value: 'streamable_http', label: 'Streamable HTTP' },
  { value: 'sse', label: 'SSE' },
];

/**
 * Create or edit an MCP server: where it listens, how, the headers it needs
 * (stored encrypted), and its OAuth client settings when it wants sign-in.
 */
export function McpForm({ projectId, item: server, onDone }: ItemFormProps<McpServer>) {
  const save = useSaveMcpServer(projectId, server?.id);
  const f = useFields(
    () => ({
      name: server?.name ?? '',
      endpoint: server?.endpoint ?? '',
      transport: server?.transport ?? 'streamable_http',
      headers: toPairs(server?.headers),
      ...oauthDraft(server),
    }),
    save.error,
  );
  const oauth = oauthBody(f.values);
  // Sent only when changed: an edit of anything else leaves the server's OAuth settings as they are.
  const oauthChanged = JSON.stringify(oauth) !== JSON.stringify(oauthBody(oauthDraft(server)));
  const submit = () =>
    save.mutate(
      {
        name: f.values.name.trim(),
        endpoint: f.values.endpoint.trim(),
        transport: f.values.transport,
        headers: fromPairs(f.values.headers),
        ...(!server || oauthChanged ? { oauth } : {}),
        per_user_tokens: f.values.per_user_tokens,
      },
      { onSuccess: onDone },
    );
  const transport = f.text('transport');
  return (
    <ResourceForm
      onSubmit={submit}
      save={save}
      placed={PLACED}
      submitLabel={server ? 'Save MCP server' : 'Create MCP server'}
      onCancel={onDone}
    >
      <TextInput label="Name" required {...f.text('name')} data-autofocus />
      <TextInput
        label="Endpoint"
        description="http(s) URL of the server; credentials in it read back as [redacted]"
        placeholder="https://mcp.example.com/mcp"
        required
        {...f.text('endpoint')}
      />
      <Input.Wrapper label="Transport" error={transport.error}>
        <div>
          <SegmentedControl
            aria-label="Transport"
            value={transport.value}
            onChange={(v) => f.set({ transport: v as McpServerBody['transport'] })}
            data={TRANSPORTS}
          />
        </div>
      </Input.Wrapper>
      <KeyValues
        label="Headers"
        description="Sent with every request (e.g. Authorization); sensitive values read back as [redacted]"
        {...f.value('headers')}
      />
      <OAuthFields values={f.values} set={f.set} error={save.error} />
    </ResourceForm>
  );
}
