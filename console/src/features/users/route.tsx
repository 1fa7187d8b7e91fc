import { Badge, Button, Group, Modal, Select, Text } from '@mantine/core';
import { useState } from 'react';
import type { User } from '../../api/types.js';
import { useAuth, useOrgAdmin } from '../../app/auth.js';
import { RouteError } from '../../app/route-error.js';
import { ResourceTable } from '../../components/resource-table.js';
import { Empty } from '../../components/empty.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { DeleteButton } from '../config/shared/delete-button.js';
import { PageHeader } from '../config/shared/page-header.js';
import { NewUserForm } from './new-user-form.js';
import { ORG_ROLES, useDeleteUser, useUpdateUser, useUsers } from './queries.js';

const when = (at: string | null | undefined) => (at ? new Date(at).toLocaleString() : 'never');

/**
 * Users (organisation admins): who may sign in, with which organisation
 * role; deactivate (their sessions and tokens stop at once) or delete them.
 * Roles in a project are given on the project's Members.
 */
export function Component() {
  const orgAdmin = useOrgAdmin();
  const auth = useAuth();
  const users = useUsers(orgAdmin && auth.mode === 'users');
  const update = useUpdateUser();
  const remove = useDeleteUser();
  const [creating, setCreating] = useState(false);
  if (auth.mode !== 'users' || !orgAdmin) return <RouteError notFound />;
  const me = auth.session.user?.id;
  return (
    <>
      <PageHeader title="Users" action={<Button onClick={() => setCreating(true)}>New user</Button>}>
        Who may sign in, and their organisation role: owners and admins manage everything, members the
        projects they are given a role in (on the project&apos;s Members). Deactivating a user ends their
        sessions and stops their tokens at once.
      </PageHeader>
      <ErrorAlert error={update.error} />
      <ResourceTable<User>
        query={users}
        loading="Loading users"
        label="Users"
        empty={<Empty title="No user yet">Create one, or let single sign-on or SCIM create them.</Empty>}
        columns={[
          {
            header: 'User',
            cell: (u) => (
              <>
                <Text size="sm">{u.user_name}</Text>
                {(u.display_name || u.email) && (
                  <Text size="xs" c="dimmed">
                    {[u.display_name, u.email].filter(Boolean).join(' · ')}
                  </Text>
                )}
              </>
            ),
          },
          {
            header: 'Organisation role',
            cell: (u) => (
              <Select
                aria-label={`Organisation role of ${u.user_name}`}
                size="xs"
                w={120}
                data={[...ORG_ROLES]}
                value={u.org_role}
                allowDeselect={false}
                onChange={(v) => v && v !== u.org_role && update.mutate({ id: u.id, org_role: v })}
              />
            ),
          },
          {
            header: 'Status',
            cell: (u) => (
              <Badge color={u.active ? 'green' : 'gray'} variant="light">
                {u.active ? 'active' : 'deactivated'}
              </Badge>
            ),
          },
          { header: 'Last sign-in', cell: (u) => <Text size="sm">{when(u.last_login_at)}</Text> },
          {
            cell: (u) => (
              <Group gap={4} justify="flex-end" wrap="nowrap">
                {u.id !== me && (
                  <Button
                    size="compact-sm"
                    variant="subtle"
                    onClick={() => update.mutate({ id: u.id, active: !u.active })}
                    aria-label={`${u.active ? 'Deactivate' : 'Reactivate'} ${u.user_name}`}
                  >
                    {u.active ? 'Deactivate' : 'Reactivate'}
                  </Button>
                )}
                {u.id !== me && (
                  <DeleteButton
                    what={u.user_name}
                    explain="Their sessions, personal tokens and project roles go with them. This cannot be undone."
                    onDelete={() => remove.mutateAsync(u.id)}
                  />
                )}
              </Group>
            ),
          },
        ]}
      />
      <Modal opened={creating} onClose={() => setCreating(false)} title="New user">
        {creating && <NewUserForm onDone={() => setCreating(false)} />}
      </Modal>
    </>
  );
}
