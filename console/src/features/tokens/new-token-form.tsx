import {
  ActionIcon,
  Button,
  Group,
  NumberInput,
  SegmentedControl,
  Select,
  Stack,
  Text,
  TextInput,
} from '@mantine/core';
import type { ApiTokenBody, ApiTokenWithSecret, OrgRole, ProjectRole } from '../../api/types.js';
import { useOrgAdmin } from '../../app/auth.js';
import { useProject } from '../../app/project.js';
import { ResourceForm, useFields } from '../../components/resource-form.js';
import { ORG_ROLES, PROJECT_ROLES } from '../users/queries.js';
import { useIssueToken } from './queries.js';

interface Draft {
  name: string;
  kind: 'personal' | 'service';
  expires_in_days: number | string;
  org_role: OrgRole | null;
  projects: Array<{ project_id: string | null; role: ProjectRole }>;
}

/** The body the API takes: only what was chosen (a personal token without roles acts as its user). */
export function tokenBody(d: Draft): ApiTokenBody {
  const projects = d.projects.filter((p) => p.project_id);
  const body: ApiTokenBody = { name: d.name.trim(), kind: d.kind };
  if (typeof d.expires_in_days === 'number') body.expires_in_days = d.expires_in_days;
  if (d.org_role) body.org_role = d.org_role;
  if (projects.length)
    body.project_roles = Object.fromEntries(
      projects.map((p) => [p.project_id, p.role]),
    ) as ApiTokenBody['project_roles'];
  return body;
}

/**
 * A new API token: a name, an expiry, and optionally less than its owner
 * holds (an organisation role, roles in chosen projects). Organisation admins
 * may also issue service tokens, which hold exactly the roles given.
 */
export function NewTokenForm({
  onIssued,
  onCancel,
}: {
  onIssued: (t: ApiTokenWithSecret) => void;
  onCancel: () => void;
}) {
  const orgAdmin = useOrgAdmin();
  const { projects } = useProject();
  const issue = useIssueToken();
  const f = useFields<Draft>(
    { name: '', kind: 'personal', expires_in_days: 90, org_role: null, projects: [] },
    issue.error,
  );
  const setProjects = (projects: Draft['projects']) => f.set({ projects });
  const submit = () => issue.mutate(tokenBody(f.values), { onSuccess: onIssued });
  return (
    <ResourceForm
      onSubmit={submit}
      save={issue}
      placed={['name', 'kind', 'expires_in_days', 'org_role', 'project_roles']}
      submitLabel="Create token"
      onCancel={onCancel}
    >
      <TextInput
        label="Name"
        description="What uses it: a CI job, a script."
        required
        data-autofocus
        {...f.text('name')}
      />
      {orgAdmin && (
        <SegmentedControl
          aria-label="Kind"
          data={[
            { value: 'personal', label: 'Personal: acts as me' },
            { value: 'service', label: 'Service: holds the roles given' },
          ]}
          value={f.values.kind}
          onChange={(v) => f.set({ kind: v })}
        />
      )}
      <NumberInput
        label="Expires in days"
        description="Empty: never expires."
        min={1}
        allowDecimal={false}
        {...f.value('expires_in_days')}
      />
      <Select
        label="Organisation role"
        description={
          f.values.kind === 'personal'
            ? 'At most this (empty: yours).'
            : 'The role the token holds (empty: member).'
        }
        data={[...ORG_ROLES]}
        clearable
        {...f.value('org_role')}
        onChange={(v) => f.set({ org_role: v ?? null })}
      />
      <Stack gap={4}>
        <Text size="sm" fw={500}>
          Project roles
        </Text>
        <Text size="xs" c="dimmed">
          {f.values.kind === 'personal'
            ? 'Limits the token to these projects and roles (none: your own roles).'
            : 'The projects the token may act in, and its role in each.'}
        </Text>
        {f.values.projects.map((p, i) => (
          <Group key={i} wrap="nowrap">
            <Select
              aria-label={`Project ${i + 1}`}
              placeholder="Project"
              data={projects.map((pr) => ({ value: pr.id, label: pr.name }))}
              value={p.project_id}
              onChange={(v) =>
                setProjects(f.values.projects.map((q, j) => (j === i ? { ...q, project_id: v } : q)))
              }
              style={{ flex: 1 }}
            />
            <Select
              aria-label={`Role in project ${i + 1}`}
              data={PROJECT_ROLES}
              value={p.role}
              allowDeselect={false}
              onChange={(v) =>
                v && setProjects(f.values.projects.map((q, j) => (j === i ? { ...q, role: v } : q)))
              }
              w={260}
            />
            <ActionIcon
              variant="subtle"
              color="red"
              aria-label={`Remove project ${i + 1}`}
              onClick={() => setProjects(f.values.projects.filter((_, j) => j !== i))}
            >
              ×
            </ActionIcon>
          </Group>
        ))}
        <Button
          variant="light"
          size="compact-sm"
          w="fit-content"
          onClick={() => setProjects([...f.values.projects, { project_id: null, role: 'viewer' }])}
        >
          Add project
        </Button>
      </Stack>
    </ResourceForm>
  );
}
