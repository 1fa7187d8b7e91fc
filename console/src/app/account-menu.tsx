import { Button, Group, Text } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { authApi } from '../api/auth.js';
import { endSession } from '../api/session.js';
import { useAuth } from './auth.js';

/** Users mode: who is signed in, and Sign out. Nothing in open mode. */
export function AccountMenu() {
  const auth = useAuth();
  const client = useQueryClient();
  const [leaving, setLeaving] = useState(false);
  if (auth.mode === 'open') return null;
  const { user, principal } = auth.session;
  const name = user ? user.display_name || user.user_name : principal?.name;
  const role = user?.org_role ?? principal?.org_role;
  const signOut = async () => {
    setLeaving(true);
    // Signed out here even when the server cannot be told: the cookie is HTTP-only, the next call says.
    await authApi.logout().catch(() => undefined);
    client.removeQueries({ predicate: (q) => q.queryKey[0] !== 'auth' || q.queryKey[1] === 'session' });
    endSession();
    setLeaving(false);
  };
  return (
    <Group gap="xs" wrap="nowrap">
      <Text size="sm" visibleFrom="sm" data-testid="signed-in-user" title={`${role} of the organisation`}>
        {name}
      </Text>
      <Button size="xs" variant="default" loading={leaving} onClick={() => void signOut()}>
        Sign out
      </Button>
    </Group>
  );
}
