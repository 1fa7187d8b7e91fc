import { Anchor, Button, Code, Group, Modal, Select, Table, Text, TextInput } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../../api/client.js';
import type { AuditEvent, AuditFilters } from '../../api/types.js';
import { useAuth, useOrgAdmin } from '../../app/auth.js';
import { useProject } from '../../app/project.js';
import { RouteError } from '../../app/route-error.js';
import { Empty } from '../../components/empty.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { Loading } from '../../components/loading.js';
import { PageHeader } from '../config/shared/page-header.js';
import { Pager } from '../sessions/pager.js';

const PAGE = 50;

interface Filters {
  actor_id: string;
  action: string;
  resource_type: string;
  project_id: string | null;
  /** datetime-local values (the browser's time zone), empty: unbounded. */
  from: string;
  to: string;
}

const EMPTY: Filters = { actor_id: '', action: '', resource_type: '', project_id: null, from: '', to: '' };

/** The query the API takes: only the filters given, the window in UTC. */
export function auditQuery(f: Filters): AuditFilters {
  const q: AuditFilters = {};
  if (f.actor_id.trim()) q.actor_id = f.actor_id.trim();
  if (f.action.trim()) q.action = f.action.trim();
  if (f.resource_type.trim()) q.resource_type = f.resource_type.trim();
  if (f.project_id) q.project_id = f.project_id;
  if (f.from) q.start_time = new Date(f.from).toISOString();
  if (f.to) q.end_time = new Date(f.to).toISOString();
  return q;
}

function exportUrl(q: AuditFilters): string {
  const params = new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)]));
  const query = params.toString();
  return `/api/agent-server/audit-events/export${query ? `?${query}` : ''}`;
}

function FilterBar({ onApply }: { onApply: (f: Filters) => void }) {
  const { projects } = useProject();
  const [f, setF] = useState<Filters>(EMPTY);
  const text = (key: 'actor_id' | 'action' | 'resource_type') => ({
    value: f[key],
    onChange: (e: { currentTarget: { value: string } }) => setF({ ...f, [key]: e.currentTarget.value }),
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        onApply(f);
      }}
    >
      <Group align="flex-end" mb="md" gap="xs">
        <TextInput label="Action" placeholder="agent.update" size="xs" {...text('action')} />
        <TextInput label="Resource type" placeholder="agent" size="xs" {...text('resource_type')} />
        <TextInput label="Actor id" size="xs" {...text('actor_id')} />
        <Select
          label="Project"
          size="xs"
          clearable
          placeholder="Any"
          data={projects.map((p) => ({ value: p.id, label: p.name }))}
          value={f.project_id}
          onChange={(v) => setF({ ...f, project_id: v })}
        />
        <TextInput
          label="From"
          type="datetime-local"
          size="xs"
          value={f.from}
          onChange={(e) => setF({ ...f, from: e.currentTarget.value })}
        />
        <TextInput
          label="To"
          type="datetime-local"
          size="xs"
          value={f.to}
          onChange={(e) => setF({ ...f, to: e.currentTarget.value })}
        />
        <Button type="submit" size="xs">
          Apply
        </Button>
      </Group>
    </form>
  );
}

/** An event's before, after and details, as the API recorded them (secrets already redacted). */
function Changes({ event, onClose }: { event: AuditEvent | null; onClose: () => void }) {
  return (
    <Modal
      opened={event !== null}
      onClose={onClose}
      title={event ? `${event.action} at ${event.at}` : ''}
      size="xl"
    >
      {event && (
        <Code block>
          {JSON.stringify(
            {
              before: event.before,
              after: event.after,
              details: event.details,
              method: event.method,
              path: event.path,
              user_agent: event.user_agent,
            },
            null,
            2,
          )}
        </Code>
      )}
    </Modal>
  );
}

/**
 * The audit log (organisation admins): who changed what, when and from
 * where, newest first, filtered by action, resource, actor, project and a
 * time window; the same selection downloads as JSON lines.
 */
export function Component() {
  const auth = useAuth();
  const orgAdmin = useOrgAdmin();
  const { projects } = useProject();
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [offset, setOffset] = useState(0);
  const [shown, setShown] = useState<AuditEvent | null>(null);
  const q = auditQuery(filters);
  const events = useQuery({
    queryKey: ['audit-events', q, offset],
    enabled: auth.mode === 'users' && orgAdmin,
    placeholderData: keepPreviousData,
    queryFn: () =>
      unwrap<AuditEvent[]>(
        api.GET('/api/agent-server/audit-events', { params: { query: { ...q, limit: PAGE, offset } } }),
      ),
  });
  if (auth.mode !== 'users' || !orgAdmin) return <RouteError notFound />;
  const projectName = (id: string | null) => (id ? (projects.find((p) => p.id === id)?.name ?? id) : '—');
  const rows = events.data ?? [];
  return (
    <>
      <PageHeader
        title="Audit log"
        action={
          <Anchor href={exportUrl(q)} download="audit-events.jsonl" size="sm">
            Export as JSON lines
          </Anchor>
        }
      >
        Every change to configuration, keys, users and roles, every sign-in and failed sign-in, every token
        issued or revoked, every decision on a paused run: who, when, what and from where. Secrets are
        redacted.
      </PageHeader>
      <FilterBar
        onApply={(f) => {
          setFilters(f);
          setOffset(0);
        }}
      />
      <ErrorAlert error={events.error} />
      {events.isLoading && <Loading what="Loading the audit log" />}
      {events.data && rows.length === 0 && <Empty title="No event">Nothing matches these filters.</Empty>}
      {rows.length > 0 && (
        <Table striped highlightOnHover aria-label="Audit events">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>When</Table.Th>
              <Table.Th>Who</Table.Th>
              <Table.Th>Action</Table.Th>
              <Table.Th>Resource</Table.Th>
              <Table.Th>Project</Table.Th>
              <Table.Th>From</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((e) => (
              <Table.Tr key={e.id}>
                <Table.Td>
                  <Text size="sm">{new Date(e.at).toLocaleString()}</Text>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{e.actor_name ?? e.actor_id ?? e.actor_type}</Text>
                  <Text size="xs" c="dimmed">
                    {e.actor_type}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Code>{e.action}</Code>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{[e.resource_type, e.resource_id].filter(Boolean).join(' ') || '—'}</Text>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{projectName(e.project_id)}</Text>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{e.ip ?? '—'}</Text>
                </Table.Td>
                <Table.Td>
                  <Button size="compact-sm" variant="subtle" onClick={() => setShown(e)}>
                    Changes
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Pager offset={offset} pageSize={PAGE} count={rows.length} onChange={setOffset} />
      <Changes event={shown} onClose={() => setShown(null)} />
    </>
  );
}
