import { Button, Code, Stack, Text } from '@mantine/core';
import type { RunPause } from '../../api/types.js';

/**
 * A tool call waiting for an MCP server's (or a remote A2A agent's) OAuth authorization: the link a
 * person opens to authorize. Nothing to send back: once the authorization
 * server redirects to the platform's callback, the run goes on by itself
 * (the page polls and sees it).
 */
export function AuthorizationNeeded({ pause }: { pause: RunPause }) {
  const d = pause.details ?? {};
  const server = d.server_name ?? d.server_id ?? 'the server';
  const a2a = (d as { server_kind?: string }).server_kind === 'a2a';
  return (
    <Stack gap="xs">
      <Text size="sm" fw={500}>
        {a2a ? 'A2A agent' : 'MCP server'} {server} needs authorization
      </Text>
      <Text size="sm" c="dimmed">
        {d.end_user_id ? (
          <>
            The server wants the end user <Code>{d.end_user_id}</Code> to sign in.{' '}
          </>
        ) : (
          'The server wants the project to sign in. '
        )}
        Open its authorization page in a new tab; the run resumes by itself once it completes.
      </Text>
      {d.authorization_url ? (
        <Button
          component="a"
          href={d.authorization_url}
          target="_blank"
          rel="noopener"
          size="xs"
          w="fit-content"
        >
          Authorize
        </Button>
      ) : (
        <Text size="sm" c="dimmed">
          No authorization page yet: use Authorize on the {a2a ? 'A2A agents' : 'MCP servers'} page.
        </Text>
      )}
    </Stack>
  );
}
