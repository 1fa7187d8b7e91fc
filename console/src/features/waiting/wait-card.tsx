import { Anchor, Badge, Group, Paper, Stack, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import type { Run } from '../../api/types.js';
import { fmtDate } from '../sessions/format.js';

/** What every waiting run's card shows above its own part: who waits, where, since when, until when. */
export interface WaitingRunHead {
  runId: string;
  agent: string;
  conversationId: string;
  since: string | null | undefined;
  /** What happens by itself at `timeoutAt` ("declined", "cancelled", "failed"). */
  timeout?: { at: string | null | undefined; outcome: string };
  traceId: string | null | undefined;
  temporalUrl: string | null | undefined;
}

/** The frame of one waiting run: its reason as a badge, its heading and links, then the reason's own part. */
export function WaitCard({
  label,
  reason,
  colour,
  head,
  children,
}: {
  /** The card's accessible name. */
  label: string;
  reason: string;
  colour: string;
  head: WaitingRunHead;
  children: ReactNode;
}) {
  return (
    <Paper withBorder p="md" radius="md" component="article" aria-label={label}>
      <Group justify="space-between" align="flex-start" mb="xs" wrap="nowrap">
        <Stack gap={2}>
          <Group gap="xs">
            <Badge color={colour} variant="light">
              {reason}
            </Badge>
            <Text fw={600}>{head.agent}</Text>
          </Group>
          <Text size="sm" c="dimmed">
            Conversation{' '}
            <Anchor
              component={Link}
              to={`/sessions/${encodeURIComponent(head.conversationId)}`}
              ff="monospace"
            >
              {head.conversationId}
            </Anchor>{' '}
            · waiting since {fmtDate(head.since)}
            {head.timeout?.at
              ? ` · ${head.timeout.outcome} automatically at ${fmtDate(head.timeout.at)}`
              : ''}
          </Text>
        </Stack>
        <Group gap="xs" wrap="nowrap">
          {head.traceId && (
            <Anchor component={Link} to={`/traces/${head.traceId}`} size="sm">
              Trace
            </Anchor>
          )}
          {head.temporalUrl && (
            <Anchor href={head.temporalUrl} target="_blank" rel="noreferrer" size="sm">
              Workflow
            </Anchor>
          )}
        </Group>
      </Group>
      {children}
    </Paper>
  );
}

/** The heading of a run waiting for budget or a decision, from its run view; `outcome` is what its timeout does. */
export function headOfRun(run: Run, outcome: string): WaitingRunHead {
  return {
    runId: run.run_id ?? '',
    agent: run.agent_name ?? run.agent_id ?? 'Agent',
    conversationId: run.conversation_id ?? '',
    since: run.pause?.since,
    timeout: { at: run.pause?.timeout_at, outcome },
    traceId: run.trace_id,
    temporalUrl: run.temporal_ui_url,
  };
}
