import { Checkbox, Fieldset, Group, PasswordInput, Select, Stack, TextInput } from '@mantine/core';
import type { McpServer, McpServerBody } from '../../../api/types.js';
import { fieldError, fieldErrorUnder } from '../../../components/field-errors.js';

/** The `oauth` an MCP server or a remote A2A agent takes (the API has one shape for both). */
type OAuthBody = NonNullable<McpServerBody['oauth']>;

/** What holds OAuth settings: an MCP server, a remote A2A agent. */
export interface OAuthHolder {
  oauth?: McpServer['oauth'];
  per_user_tokens?: boolean;
}

/** The OAuth client settings as the form holds them (text, and null for an unchosen select). */
export interface OAuthDraft {
  client_id: string;
  /** "[redacted]" as read back: sent unchanged, it keeps the stored secret. */
  client_secret: string;
  /** Scopes separated by spaces or commas. */
  scopes: string;
  token_endpoint_auth_method: OAuthBody['token_endpoint_auth_method'] | null;
  grant: OAuthBody['grant'] | null;
  per_user_tokens: boolean;
}

const METHODS = [
  { value: 'client_secret_basic', label: 'client_secret_basic' },
  { value: 'client_secret_post', label: 'client_secret_post' },
  { value: 'none', label: 'none (public client)' },
  { value: 'private_key_jwt', label: 'private_key_jwt' },
];
const GRANTS = [
  { value: 'authorization_code', label: 'Authorization code (a person signs in)' },
  { value: 'client_credentials', label: 'Client credentials (no one signs in)' },
];

export function oauthDraft(holder: OAuthHolder | undefined): OAuthDraft {
  const o = holder?.oauth;
  return {
    client_id: o?.client_id ?? '',
    client_secret: o?.client_secret ?? '',
    scopes: (o?.scopes ?? []).join(' '),
    token_endpoint_auth_method: o?.token_endpoint_auth_method ?? null,
    grant: o?.grant ?? null,
    per_user_tokens: holder?.per_user_tokens ?? false,
  };
}

/** The `oauth` the API takes: the fields filled in, or null when none is (discovery and registration do it all). */
export function oauthBody(d: OAuthDraft): OAuthBody | null {
  const scopes = d.scopes.split(/[\s,]+/).filter(Boolean);
  const body: OAuthBody = {
    ...(d.client_id.trim() ? { client_id: d.client_id.trim() } : {}),
    ...(d.client_secret ? { client_secret: d.client_secret } : {}),
    ...(scopes.length ? { scopes } : {}),
    ...(d.token_endpoint_auth_method ? { token_endpoint_auth_method: d.token_endpoint_auth_method } : {}),
    ...(d.grant ? { grant: d.grant } : {}),
  };
  return Object.keys(body).length ? body : null;
}

/** What the fields' descriptions say where an MCP server and a remote A2A agent differ. */
export interface OAuthHints {
  clientId: string;
  scopes: string;
}

const MCP_HINTS: OAuthHints = {
  clientId: 'Empty: registered with the authorization server when it allows',
  scopes: 'Separated by spaces or commas; empty: what the server asks for',
};

/**
 * The OAuth part of an MCP server's or a remote A2A agent's form: every
 * field optional (for an MCP server the platform discovers the authorization
 * server and registers a client when none is given), and whether each end
 * user authorizes on their own.
 */
export function OAuthFields({
  values,
  set,
  error,
  hints = MCP_HINTS,
}: {
  values: OAuthDraft;
  set: (patch: Partial<OAuthDraft>) => void;
  error: unknown;
  hints?: OAuthHints;
}) {
  const text = (key: 'client_id' | 'client_secret' | 'scopes') => ({
    value: values[key],
    onChange: (e: { currentTarget: { value: string } }) => set({ [key]: e.currentTarget.value }),
    error: fieldErrorUnder(error, `oauth.${key}`),
  });
  const select = (key: 'token_endpoint_auth_method' | 'grant') => ({
    value: values[key],
    onChange: (v: string | null) => set({ [key]: v }),
    error: fieldError(error, `oauth.${key}`),
  });
  return (
    <Fieldset legend="OAuth (optional)">
      <Stack gap="sm">
        <Group grow align="flex-start">
          <TextInput
            label="Client id"
            description={hints.clientId}
            {...text('client_id')}
            // A rule over the whole object (a secret needs an id) names `oauth` itself.
            error={fieldError(error, 'oauth.client_id') ?? fieldError(error, 'oauth')}
          />
          <PasswordInput
            label="Client secret"
            description="Stored encrypted; reads back as [redacted], kept unless changed"
            autoComplete="new-password"
            {...text('client_secret')}
          />
        </Group>
        <TextInput label="Scopes" description={hints.scopes} placeholder="read write" {...text('scopes')} />
        <Group grow align="flex-start">
          <Select
            label="Token endpoint auth method"
            description="Empty: as the authorization server says"
            data={METHODS}
            clearable
            {...select('token_endpoint_auth_method')}
          />
          <Select
            label="Grant"
            description="Client credentials needs the client id and secret"
            data={GRANTS}
            clearable
            {...select('grant')}
          />
        </Group>
        <Checkbox
          label="Per-user tokens"
          description="Each end user (the end_user_id of a run) authorizes on their own, instead of the project once"
          checked={values.per_user_tokens}
          onChange={(e) => set({ per_user_tokens: e.currentTarget.checked })}
          error={fieldError(error, 'per_user_tokens')}
        />
      </Stack>
    </Fieldset>
  );
}
