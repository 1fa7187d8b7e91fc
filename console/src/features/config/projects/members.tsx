import { Button, Group, Modal, Select, Stack, Table, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import type { Project, ProjectRole } from '../../../api/types.js';
import { useOrgAdmin } from '../../../app/auth.js';
import { Empty } from '../../../components/empty.js';
import { ErrorAlert } from '../../../components/error-alert.js';
import { Loading } from '../../../components/loading.js';
import { PROJECT_ROLES, useMembers, useRemoveMember, useSetMember, useUsers } from '../../users/queries.js';
import { DeleteButton } from '../shared/delete-button.js';

/** Adds a user with a role: org admins choose from the users; a project admin (who cannot list them) gives the user's id. */
function AddMember({ projectId, present }: { projectId: string; present: Set<string> }) {
  const orgAdmin = useOrgAdmin();
  const users = useUsers(orgAdmin);
  const [userId, setUserId] = useState<string | null>(null);
  const [role, setRole] = useState<ProjectRole>('viewer');
  const set = useSetMember(projectId);
  const add = () => {
    if (!userId) return;
    set.mutate({ userId: userId.trim(), role }, { onSuccess: () => setUserId(null) });
  };
  return (
    <Stack gap="xs">
      <Group align="flex-end" wrap="nowrap">
        {orgAdmin ? (
          <Select
            label="User"
            searchable
            data={(users.data ?? [])
              .filter((u) => u.active && !present.has(u.id))
              .map((u) => ({
                value: u.id,
                label: u.display_name ? `${u.display_name} (${u.user_name})` : u.user_name,
              }))}
            value={userId}
            onChange={setUserId}
            style={{ flex: 1 }}
          />
        ) : (
          <TextInput
            label="User id"
            value={userId ?? ''}
            onChange={(e) => setUserId(e.currentTarget.value)}
            style={{ flex: 1 }}
          />
        )}
        <Select
          label="Role"
          data={PROJECT_ROLES}
          value={role}
          onChange={(v) => v && setRole(v)}
          allowDeselect={false}
          w={280}
        />
        <Button onClick={add} disabled={!userId?.trim()} loading={set.isPending}>
          Add member
        </Button>
      </Group>
      <ErrorAlert error={set.error} />
    </Stack>
  );
}

/** A project's members: each one's role (changed in place), Remove, and Add member. */
function MemberList({ projectId }: { projectId: string }) {
  const members = useMembers(projectId);
  const set = useSetMember(projectId);
  const remove = useRemoveMember(projectId);
  if (members.isLoading) return <Loading what="Loading members" />;
  if (members.error) return <ErrorAlert error={members.error} />;
  const rows = members.data ?? [];
  return (
    <Stack>
      {rows.length === 0 ? (
        <Empty title="No member yet">
          Organisation owners and admins can do everything in every project; add others here with a role.
        </Empty>
      ) : (
        <Table aria-label="Members">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>User</Table.Th>
              <Table.Th>Role</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((m) => (
              <Table.Tr key={m.user_id}>
                <Table.Td>
                  <Text size="sm">{m.display_name || m.user_name}</Text>
                  {m.display_name && (
                    <Text size="xs" c="dimmed">
                      {m.user_name}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  <Select
                    aria-label={`Role of ${m.user_name}`}
                    size="xs"
                    data={PROJECT_ROLES}
                    value={m.role}
                    onChange={(v) => v && set.mutate({ userId: m.user_id, role: v })}
                    allowDeselect={false}
                    w={280}
                  />
                </Table.Td>
                <Table.Td>
                  <DeleteButton
                    what={m.user_name}
                    label="Remove"
                    explain="They lose their role in this project (organisation owners and admins keep theirs)."
                    onDelete={() => remove.mutateAsync(m.user_id)}
                  />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <ErrorAlert error={set.error} />
      <AddMember projectId={projectId} present={new Set(rows.map((m) => m.user_id))} />
    </Stack>
  );
}

/** The project's Members button and its dialog (users mode, the project's admins). */
export function MembersButton({ project }: { project: Project }) {
  const [opened, setOpened] = useState(false);
  return (
    <>
      <Button
        size="compact-sm"
        variant="light"
        onClick={() => setOpened(true)}
        aria-label={`Members of ${project.name}`}
      >
        Members
      </Button>
      <Modal opened={opened} onClose={() => setOpened(false)} title={`Members of ${project.name}`} size="xl">
        {opened && <MemberList projectId={project.id} />}
      </Modal>
    </>
  );
}
