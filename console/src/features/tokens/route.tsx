import { Badge, Button, Code, Group, Modal, Text } from '@mantine/core';
import { useState } from 'react';
import type { ApiToken, ApiTokenWithSecret } from '../../api/types.js';
import { useAuth } from '../../app/auth.js';
import { useProject } from '../../app/project.js';
import { RouteError } from '../../app/route-error.js';
import { Empty } from '../../components/empty.js';
import { ResourceTable } from '../../components/resource-table.js';
import { SecretOnce } from '../../components/secret-once.js';
import { DeleteButton } from '../config/shared/delete-button.js';
import { PageHeader } from '../config/shared/page-header.js';
import { NewTokenForm } from './new-token-form.js';
import { useRevokeToken, useTokens } from './queries.js';

const date = (at: string | null | undefined) => (at ? new Date(at).toLocaleDateString() : undefined);

function status(t: ApiToken): { label: string; color: string } {
  if (t.revoked_at) return { label: 'revoked', color: 'gray' };
  if (t.expires_at && new Date(t.expires_at) < new Date()) return { label: 'expired', color: 'gray' };
  return { label: 'active', color: 'green' };
}

/** What a token holds, in words: its organisation role cap and its projects' roles. */
function Roles({ token }: { token: ApiToken }) {
  const { projects } = useProject();
  const nameOf = (id: string) => projects.find((p) => p.id === id)?.name ?? id;
  // The generated type knows only an object: the API's is project id → role.
  const perProject = Object.entries(token.project_roles ?? {}) as Array<[string, string]>;
  if (!token.org_role && perProject.length === 0)
    return (
      <Text size="sm" c="dimmed">
        {token.kind === 'personal' ? 'as its owner' : 'member'}
      </Text>
    );
  return (
    <Group gap={4}>
      {token.org_role && <Badge variant="light">{`org: ${token.org_role}`}</Badge>}
      {perProject.map(([id, role]) => (
        <Badge key={id} variant="outline">{`${nameOf(id)}: ${role}`}</Badge>
      ))}
    </Group>
  );
}

/**
 * API tokens for automation, the Agent Protocol, MCP and A2A clients: mine
 * (personal: never more than my roles) and, for organisation admins, service
 * tokens. The secret shows once, when the token is created; revoking one stops it at once.
 */
export function Component() {
  const auth = useAuth();
  const tokens = useTokens();
  const revoke = useRevokeToken();
  const [creating, setCreating] = useState(false);
  const [issued, setIssued] = useState<ApiTokenWithSecret | null>(null);
  if (auth.mode !== 'users') return <RouteError notFound />;
  return (
    <>
      <PageHeader title="API tokens" action={<Button onClick={() => setCreating(true)}>New token</Button>}>
        Tokens for scripts and clients (the REST API, the Agent Protocol, MCP, A2A), sent as{' '}
        <Code>Authorization: Bearer …</Code>. A personal token acts as you, never with more than your roles; a
        service token holds exactly the roles it was given.
      </PageHeader>
      <ResourceTable<ApiToken>
        query={tokens}
        loading="Loading tokens"
        label="API tokens"
        empty={
          <Empty title="No token yet">Create one for a script or a client; its secret shows once.</Empty>
        }
        columns={[
          { header: 'Name', cell: (t) => t.name },
          { header: 'Kind', cell: (t) => <Badge variant="light">{t.kind}</Badge> },
          { header: 'Starts with', cell: (t) => <Code>{t.token_prefix}…</Code> },
          { header: 'Roles', cell: (t) => <Roles token={t} /> },
          { header: 'Expires', cell: (t) => date(t.expires_at) ?? 'never' },
          { header: 'Last used', cell: (t) => date(t.last_used_at) ?? 'never' },
          {
            header: 'Status',
            cell: (t) => (
              <Badge variant="light" color={status(t).color}>
                {status(t).label}
              </Badge>
            ),
          },
          {
            cell: (t) =>
              status(t).label === 'active' && (
                <DeleteButton
                  what={t.name}
                  label="Revoke"
                  explain="Whatever uses it is refused from its next request."
                  onDelete={() => revoke.mutateAsync(t.id)}
                />
              ),
          },
        ]}
      />
      <Modal opened={creating} onClose={() => setCreating(false)} title="New API token" size="lg">
        {creating && (
          <NewTokenForm
            onCancel={() => setCreating(false)}
            onIssued={(t) => {
              setCreating(false);
              setIssued(t);
            }}
          />
        )}
      </Modal>
      <SecretOnce
        secret={issued?.token ?? null}
        title={`Token ${issued?.name ?? ''}`}
        testId="issued-token"
        warning="Only its hash is kept: a lost token cannot be shown again; revoke it and create another."
        onClose={() => setIssued(null)}
      >
        <Text size="sm">
          Send it as <Code>Authorization: Bearer {'<token>'}</Code>.
        </Text>
      </SecretOnce>
    </>
  );
}
