import { Anchor, Badge, Button, Group, Stack, Table, Text, Tooltip } from '@mantine/core';
import { Fragment, useState } from 'react';
import { Link } from 'react-router';
import type { Run } from '../../api/types.js';
import { fmtCost, fmtDate, fmtDuration, fmtInt, statusColour } from './format.js';
import { RunDetails } from './run-details.js';
import { RunSource } from './run-source.js';

/** Model steps of a turn: each tool round is one, and the final answer one more. */
export function runSteps(run: Run): number {
  const steps = new Set((run.tool_calls ?? []).map((c) => Number(c.step)));
  return steps.size + (run.output ? 1 : 0);
}

export function RunStatus({ status }: { status: string | undefined }) {
  return (
    <Badge color={statusColour(status)} variant="light" style={{ minWidth: 'max-content' }}>
      {(status ?? 'unknown').replace('_', ' ')}
    </Badge>
  );
}

export function RunLinks({ run }: { run: Run }) {
  return (
    <Group gap="xs" wrap="nowrap">
      {run.trace_id ? (
        <Anchor component={Link} to={`/traces/${run.trace_id}`} size="sm">
          Trace
        </Anchor>
      ) : (
        <Tooltip label="Tracing was off for this turn">
          <Text size="sm" c="dimmed">
            No trace
          </Text>
        </Tooltip>
      )}
      {run.temporal_ui_url && (
        <Anchor href={run.temporal_ui_url} target="_blank" rel="noreferrer" size="sm">
          Workflow
        </Anchor>
      )}
    </Group>
  );
}

/** Each turn: status, agent, steps, tokens, cost, duration, and links to its trace and workflow. */
export function RunsTable({ runs }: { runs: Run[] }) {
  const [open, setOpen] = useState<string | null>(null);
  return (
    <Table.ScrollContainer minWidth={900}>
      <Table highlightOnHover aria-label="Runs" style={{ whiteSpace: 'nowrap' }}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Started</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Agent</Table.Th>
            <Table.Th>Model</Table.Th>
            <Table.Th ta="right">Steps</Table.Th>
            <Table.Th ta="right">Tokens in / out</Table.Th>
            <Table.Th ta="right">Cost</Table.Th>
            <Table.Th ta="right">Duration</Table.Th>
            <Table.Th>Links</Table.Th>
            <Table.Th />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {runs.map((run) => {
            const id = run.run_id ?? '';
            const expanded = open === id;
            return (
              <Fragment key={id}>
                <Table.Tr data-run-id={id}>
                  <Table.Td>
                    <Text size="sm">{fmtDate(run.created_at)}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Group gap={4} wrap="nowrap">
                      <RunStatus status={run.status} />
                      <RunSource source={run.source} />
                    </Group>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{run.agent_name ?? run.agent_id ?? '—'}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm" ff="monospace">
                      {run.model ?? '—'}
                    </Text>
                  </Table.Td>
                  <Table.Td ta="right">{runSteps(run)}</Table.Td>
                  <Table.Td ta="right">
                    {fmtInt(run.usage?.input_tokens)} / {fmtInt(run.usage?.output_tokens)}
                  </Table.Td>
                  <Table.Td ta="right">{fmtCost(run.cost_usd)}</Table.Td>
                  <Table.Td ta="right">{fmtDuration(run.duration_ms)}</Table.Td>
                  <Table.Td>
                    <RunLinks run={run} />
                  </Table.Td>
                  <Table.Td>
                    <Button
                      size="compact-xs"
                      variant="subtle"
                      aria-expanded={expanded}
                      onClick={() => setOpen(expanded ? null : id)}
                    >
                      {expanded ? 'Hide' : 'Details'}
                    </Button>
                  </Table.Td>
                </Table.Tr>
                {expanded && (
                  <Table.Tr>
                    <Table.Td colSpan={10} style={{ whiteSpace: 'normal' }}>
                      <Stack>
                        <RunDetails run={run} />
                      </Stack>
                    </Table.Td>
                  </Table.Tr>
                )}
              </Fragment>
            );
          })}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
