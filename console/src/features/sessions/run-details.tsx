import { Alert, Badge, Button, Code, Group, Stack, Table, Text, Title } from '@mantine/core';
import type { Run } from '../../api/types.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { fmtDate, fmtDuration, prettyJson } from './format.js';
import { LIVE, useCancelRun } from './queries.js';
import { SubAgentRuns } from './sub-agent-runs.js';
import { useCan } from '../../app/auth.js';

interface ToolCall {
  id?: string;
  name?: string;
  arguments?: string;
  step?: number;
  output?: string;
  is_error?: boolean;
}

/** What the run was tried with instead of its agent's configuration (converse `overrides`). */
function Overrides({ overrides }: { overrides: NonNullable<Run['overrides']> }) {
  return (
    <Alert color="orange" variant="light" p="xs" title="Run with changes (overrides)">
      <Group gap="lg">
        {overrides.prompt_version_id && (
          <Text size="xs">
            prompt version <Code>{overrides.prompt_version_id}</Code>
          </Text>
        )}
        {overrides.model_id && (
          <Text size="xs">
            model <Code>{overrides.model_id}</Code>
          </Text>
        )}
        {overrides.parameters && (
          <Text size="xs">
            parameters <Code>{JSON.stringify(overrides.parameters)}</Code>
          </Text>
        )}
      </Group>
    </Alert>
  );
}

/** Stops a run that has not ended: keeping what it produced, or removing it from the conversation. */
function CancelRun({ run }: { run: Run }) {
  const cancel = useCancelRun(run.run_id ?? '', run.project_id);
  return (
    <Stack gap={4}>
      <Group gap="xs">
        <Button
          size="compact-xs"
          variant="default"
          color="red"
          loading={cancel.isPending && cancel.variables === 'interrupt'}
          disabled={cancel.isPending}
          title="Stop the turn where it is; what it produced so far stays in the conversation"
          onClick={() => cancel.mutate('interrupt')}
        >
          Cancel
        </Button>
        <Button
          size="compact-xs"
          variant="default"
          color="red"
          loading={cancel.isPending && cancel.variables === 'rollback'}
          disabled={cancel.isPending}
          title="Stop the turn and remove its messages from the conversation, as if it had not happened"
          onClick={() => cancel.mutate('rollback')}
        >
          Cancel and roll back
        </Button>
      </Group>
      <ErrorAlert error={cancel.error} />
    </Stack>
  );
}

/** One run in full: output, tool calls per step, approvals, errors, warnings, timing, overrides. */
export function RunDetails({ run }: { run: Run }) {
  const operates = useCan()('operate', run.project_id);
  const calls = (run.tool_calls ?? []) as ToolCall[];
  const decisions = (run.approvals ?? []) as Array<{
    id?: string;
    decision?: string;
    by?: string;
    at?: string;
  }>;
  const pending = (run.pending_approvals ?? []) as ToolCall[];
  return (
    <Stack gap="sm">
      <Group gap="lg">
        <Text size="xs" c="dimmed">
          Run <Code>{run.run_id}</Code>
        </Text>
        <Text size="xs" c="dimmed">
          Message <Code>{run.message_id}</Code>
        </Text>
        <Text size="xs" c="dimmed">
          Agent version {run.agent_version ?? '—'} · door <Code>{run.door ?? '—'}</Code>
        </Text>
        <Text size="xs" c="dimmed">
          Queued {fmtDate(run.created_at)} · started {fmtDate(run.started_at)} · finished{' '}
          {fmtDate(run.finished_at)} ({fmtDuration(run.duration_ms)})
        </Text>
        {run.first_token_ms != null && (
          <Text size="xs" c="dimmed">
            First output after {fmtDuration(run.first_token_ms)}
          </Text>
        )}
        {run.approval_wait_ms != null && (
          <Text size="xs" c="dimmed">
            Waited {fmtDuration(run.approval_wait_ms)} for approval
          </Text>
        )}
      </Group>
      {operates && LIVE.has(run.status ?? '') && <CancelRun run={run} />}
      <SubAgentRuns run={run} />
      {run.rolled_back && (
        <Alert color="gray" variant="light" p="xs" title="Rolled back">
          This run was cancelled and its messages removed from the conversation; the run is kept for the
          record.
        </Alert>
      )}
      {run.overrides && <Overrides overrides={run.overrides} />}
      {run.error && (
        <Alert color="red" title={run.error.code ?? 'Error'}>
          {run.error.message}
        </Alert>
      )}
      {(run.warnings ?? []).map((w) => (
        <Alert key={w} color="yellow">
          {w}
        </Alert>
      ))}
      {run.output && (
        <div>
          <Title order={6}>Output</Title>
          <Text size="sm" style={{ whiteSpace: 'pre-wrap' }}>
            {run.output.content}
          </Text>
          {run.output.structured !== undefined && (
            <Code block>{JSON.stringify(run.output.structured, null, 2)}</Code>
          )}
        </div>
      )}
      {pending.length > 0 && (
        <Text size="sm">
          Waiting for approval: {pending.map((p) => p.name).join(', ')} (decide in the Approvals inbox)
        </Text>
      )}
      {calls.length > 0 && (
        <div>
          <Title order={6}>Tool calls</Title>
          <Table aria-label="Tool calls" withTableBorder>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Step</Table.Th>
                <Table.Th>Tool</Table.Th>
                <Table.Th>Arguments</Table.Th>
                <Table.Th>Result</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {calls.map((c) => (
                <Table.Tr key={`${c.step}-${c.id}`}>
                  <Table.Td>{c.step}</Table.Td>
                  <Table.Td>
                    <Group gap={4}>
                      <Code>{c.name}</Code>
                      {c.is_error && (
                        <Badge color="red" size="xs">
                          error
                        </Badge>
                      )}
                    </Group>
                  </Table.Td>
                  <Table.Td>
                    <Code block>{prettyJson(c.arguments ?? '')}</Code>
                  </Table.Td>
                  <Table.Td>
                    <Text size="xs" style={{ whiteSpace: 'pre-wrap', maxHeight: 160, overflow: 'auto' }}>
                      {c.output ?? '—'}
                    </Text>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </div>
      )}
      {decisions.length > 0 && (
        <Text size="sm">
          Approvals:{' '}
          {decisions
            .map((d) => `${d.id}: ${d.decision} by ${d.by}${d.at ? ` at ${fmtDate(d.at)}` : ''}`)
            .join('; ')}
        </Text>
      )}
    </Stack>
  );
}
