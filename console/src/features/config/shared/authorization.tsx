import { Anchor, Badge, Button, Group, Modal, Stack, Text, TextInput, Tooltip } from '@mantine/core';
import type { QueryKey } from '@tanstack/react-query';
import { useState } from 'react';
import type { A2aAuthorizeResult, McpAuthorization, McpAuthorizeResult } from '../../../api/types.js';
import { ErrorAlert } from '../../../components/error-alert.js';
import { fieldError, textOrUndefined, unplacedError } from '../../../components/field-errors.js';
import { fmtDate } from '../../sessions/format.js';
import { DeleteButton } from './delete-button.js';
import { useSaving } from './queries.js';

type Status = NonNullable<McpAuthorization['status']>;

/** What may hold OAuth tokens: an MCP server, a remote A2A agent (the API shows both the same way). */
export interface OAuthTarget {
  id: string;
  name: string;
  oauth?: object | null;
  per_user_tokens?: boolean;
  authorization?: McpAuthorization;
}

/** The calls behind Authorize and Forget authorization for one kind of target, and the list they refresh. */
export interface AuthorizationCalls {
  /** "server", "agent": what the explanations call the target. */
  noun: string;
  listKey: (projectId: string) => QueryKey;
  /** POST …/{id}/authorize: a URL for a person to open, or `{status: 'authorized'}` when a token came without anyone. */
  authorize: (id: string, endUserId: string | undefined) => Promise<McpAuthorizeResult | A2aAuthorizeResult>;
  /** DELETE …/{id}/authorization: forgets the project's (or an end user's) tokens. */
  forget: (id: string, endUserId: string | undefined) => Promise<unknown>;
}

const statusOf = (noun: string): Record<Status, { label: string; colour: string; means: string }> => ({
  not_configured: {
    label: 'no OAuth',
    colour: 'gray',
    means: `The ${noun} never asked for authorization and has no OAuth settings`,
  },
  unauthorized: {
    label: 'unauthorized',
    colour: 'orange',
    means: `The ${noun} wants OAuth authorization: Authorize to sign in`,
  },
  authorized: { label: 'authorized', colour: 'green', means: `The project holds a token for the ${noun}` },
});

/** Whether the project holds OAuth tokens for the target, with their scopes and expiry on hover. */
export function AuthorizationBadge({ target, noun }: { target: OAuthTarget; noun: string }) {
  const a = target.authorization;
  const s = statusOf(noun)[a?.status ?? 'not_configured'];
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

interface ActionProps {
  projectId: string;
  target: OAuthTarget;
  calls: AuthorizationCalls;
}

/**
 * Authorize: asks the API for the authorization page and opens it in a new
 * tab (the list shows "authorized" once the flow completes and the page is
 * read again); a target whose token came without anyone says Authorized. A
 * target with per-user tokens first asks whose tokens (empty: the project's).
 */
export function AuthorizeButton({ projectId, target, calls }: ActionProps) {
  const authorize = useSaving([calls.listKey(projectId)], (endUserId: string | undefined) =>
    calls.authorize(target.id, endUserId),
  );
  const [opened, setOpened] = useState(false);
  const [endUser, setEndUser] = useState('');
  const perUser = target.per_user_tokens === true;
  const { noun } = calls;
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
        aria-label={`Authorize ${target.name}`}
        onClick={() => {
          setOpened(true);
          if (!perUser) start(undefined);
        }}
      >
        Authorize
      </Button>
      <Modal opened={opened} onClose={close} title={`Authorize ${target.name}`}>
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
                  description={`This ${noun} keeps a token per end user (the end_user_id of their runs); empty: the project's own`}
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
              Asking the {noun}&apos;s authorization server…
            </Text>
          )}
          {result?.status === 'authorized' && (
            <Text size="sm" c="green" fw={500}>
              Authorized: a token was obtained without anyone signing in.
            </Text>
          )}
          {result?.authorization_url && (
            <Text size="sm">
              The authorization page opened in a new tab; the {noun} reads as authorized once it completes.{' '}
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
export function ForgetAuthorization({ projectId, target, calls }: ActionProps) {
  const forget = useSaving([calls.listKey(projectId)], (endUserId: string | undefined) =>
    calls.forget(target.id, endUserId),
  );
  return (
    <DeleteButton
      what={`of ${target.name}`}
      label="Forget authorization"
      explain={`The project's tokens for this ${calls.noun} are deleted (and revoked where the authorization server allows): its next call needs authorization again.`}
      onDelete={() => forget.mutateAsync(undefined)}
    />
  );
}

/** The row's authorization actions: Authorize unless the target uses no OAuth, Forget once authorized. */
export function AuthorizationActions(props: ActionProps) {
  const status = props.target.authorization?.status ?? 'not_configured';
  return (
    <>
      {(status !== 'not_configured' || props.target.oauth) && <AuthorizeButton {...props} />}
      {status === 'authorized' && <ForgetAuthorization {...props} />}
    </>
  );
}
