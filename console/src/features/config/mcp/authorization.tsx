import { Anchor, Badge, Button, Group, Modal, Stack, Text, TextInput, Tooltip } from '@mantine/core';
import { useState } from 'react';
import type { McpAuthorization, McpServer } from '../../../api/types.js';
import { ErrorAlert } from '../../../components/error-alert.js';
import { fieldError, textOrUndefined, unplacedError } from '../../../components/field-errors.js';
import { fmtDate } from '../../sessions/format.js';
import { DeleteButton } from '../shared/delete-button.js';
import { useAuthorize, useForgetAuthorization } from './queries.js';

type Status = NonNullable<McpAuthorization['status']>;

const STATUS: Record<Status, { label: string; colour: string; means: string }> = {
  not_configured: {
    label: 'no OAuth',
    colour: 'gray',
    means: 'The server never asked for authorization and has no OAuth settings',
  },
  unauthorized: {
    label: 'unauthorized',
    colour: 'orange',
    means: 'The server wants OAuth authorization: Authorize to sign in',
  },
  authorized: { label: 'authorized', colour: 'green', means: 'The project holds a token for the server' },
};

/** Whether the project holds OAuth tokens for the server, with their scopes and expiry on hover. */
export function AuthorizationBadge({ server }: { server: McpServer }) {
  const a = server.authorization;
  const s = STATUS[a?.status ?? 'not_configured'];
  const more = [
    s.means,
    a?.scopes?.length ? `scopes: ${a.scopes.join(' ')}` : '',
    a?.expires_at ? `expires ${fmtDate(a.expires_at)}` : '',
  ].filter(Boolean);
  return (
    <Tooltip label={more.join(' · ')} multiline maw={320}>
      <Badge variant="light" color={s.colour}>
        {s.label}
      </Badge>
    </Tooltip>
  );
}

/**
 * Authorize: asks the API for the authorization page and opens it in a new
 * tab (the list shows "authorized" once the flow completes and the page is
 * read again); a server whose token came without anyone says Authorized. A
 * server with per-user tokens first asks whose tokens (empty: the project's).
 */
export function AuthorizeButton({ projectId, server }: { projectId: string; server: McpServer }) {
  const authorize = useAuthorize(projectId, server.id);
  const [opened, setOpened] = useState(false);
  const [endUser, setEndUser] = useState('');
  const perUser = server.per_user_tokens === true;
  const start = (endUserId: string | undefined) =>
    authorize.mutate(endUserId, {
      onSuccess: (r) => {
        if (r.authorization_url) window.open(r.authorization_url, '_blank', 'noopener');
      },
    });
  const close = () => {
    setOpened(false);
    authorize.reset();
  };
  const result = authorize.data;
  return (
    <>
      <Button
        size="compact-sm"
        variant="light"
        aria-label={`Authorize ${server.name}`}
        onClick={() => {
          setOpened(true);
          if (!perUser) start(undefined);
        }}
      >
        Authorize
      </Button>
      <Modal opened={opened} onClose={close} title={`Authorize ${server.name}`}>
        <Stack gap="sm">
          {perUser && (
            <form
              noValidate
              onSubmit={(e) => {
                e.preventDefault();
                start(textOrUndefined(endUser));
              }}
            >
              <Stack gap="xs">
                <TextInput
                  label="End user id"
                  description="This server keeps a token per end user (the end_user_id of their runs); empty: the project's own"
                  value={endUser}
                  onChange={(e) => setEndUser(e.currentTarget.value)}
                  error={fieldError(authorize.error, 'end_user_id')}
                  data-autofocus
                />
                <Button type="submit" size="xs" w="fit-content" loading={authorize.isPending}>
                  Start authorization
                </Button>
              </Stack>
            </form>
          )}
          {!perUser && authorize.isPending && (
            <Text size="sm" c="dimmed">
              Asking the server&apos;s authorization server…
            </Text>
          )}
          {result?.status === 'authorized' && (
            <Text size="sm" c="green" fw={500}>
              Authorized: a token was obtained without anyone signing in.
            </Text>
          )}
          {result?.authorization_url && (
            <Text size="sm">
              The authorization page opened in a new tab; the server reads as authorized once it completes.{' '}
              <Anchor href={result.authorization_url} target="_blank" rel="noopener">
                Open the authorization page
              </Anchor>
            </Text>
          )}
          <ErrorAlert error={unplacedError(authorize.error, perUser ? ['end_user_id'] : [])} />
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              Close
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}

/** Forget authorization: deletes the project's tokens (revoked at the authorization server when it can). */
export function ForgetAuthorization({ projectId, server }: { projectId: string; server: McpServer }) {
  const forget = useForgetAuthorization(projectId, server.id);
  return (
    <DeleteButton
      what={`of ${server.name}`}
      label="Forget authorization"
      explain="The project's tokens for this server are deleted (and revoked where the authorization server allows): its next call needs authorization again."
      onDelete={() => forget.mutateAsync(undefined)}
    />
  );
}

/** The row's authorization actions: Authorize unless the server uses no OAuth, Forget once authorized. */
export function AuthorizationActions({ projectId, server }: { projectId: string; server: McpServer }) {
  const status = server.authorization?.status ?? 'not_configured';
  return (
    <>
      {(status !== 'not_configured' || server.oauth) && (
        <AuthorizeButton projectId={projectId} server={server} />
      )}
      {status === 'authorized' && <ForgetAuthorization projectId={projectId} server={server} />}
    </>
  );
}
