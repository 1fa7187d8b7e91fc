import { Anchor, Breadcrumbs, Button, Code, Group, Paper, Stack, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useProject } from '../../app/project.js';
import { Empty } from '../../components/empty.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { Loading } from '../../components/loading.js';
import { fmtDate } from './format.js';
import { Pager } from './pager.js';
import { useAgents } from '../config/agents/queries.js';
import {
  LIVE,
  PAGE,
  useConversation,
  useConversationRuns,
  useForkConversation,
  useThreads,
} from './queries.js';
import { RunsTable } from './runs-table.js';
import { Transcript, type ForkAction } from './transcript.js';
import { useCan } from '../../app/auth.js';

/**
 * Where the playground takes the conversation up: its transcript, and the
 * next message to it, with the agent of its most recently active session.
 */
function playgroundHref(conversationId: string, projectId: string | undefined, agentId: string | undefined) {
  const q = new URLSearchParams({ conversation: conversationId });
  if (projectId) q.set('project', projectId);
  if (agentId) q.set('agent', agentId);
  return `/playground?${q.toString()}`;
}

/** One conversation: its sessions (Temporal links), runs, and the transcript of each thread. */
export function ConversationPage() {
  const id = useParams()['*'] ?? '';
  const { project } = useProject();
  const [offset, setOffset] = useState(0);
  const conv = useConversation(id, project?.id);
  const threads = useThreads(id, project?.id);
  const runs = useConversationRuns(id, project?.id, offset);
  const agents = useAgents(project?.id);
  const names = new Map((agents.data ?? []).map((a) => [a.id, a.name]));
  const agentName = (aid: string | null | undefined) => (aid ? (names.get(aid) ?? aid) : 'no agent');
  const live = (runs.data ?? []).some((r) => LIVE.has(r.status ?? ''));
  const navigate = useNavigate();
  const forking = useForkConversation(id, project?.id);
  const develops = useCan()('develop');
  // The fork opens at once: it is an ordinary conversation, continued from its own page.
  const fork: ForkAction = {
    fork: (messageId) =>
      forking.mutate(messageId, {
        onSuccess: (created) => void navigate(`/sessions/${encodeURIComponent(created.id ?? '')}`),
      }),
    pendingId: forking.isPending ? forking.variables : undefined,
  };

  const header = (
    <Breadcrumbs>
      <Anchor component={Link} to="/sessions">
        Sessions
      </Anchor>
      <Text ff="monospace">{id}</Text>
    </Breadcrumbs>
  );
  if (conv.isLoading) return <Loading what="Loading the conversation" />;
  if (conv.error)
    return (
      <Stack>
        {header}
        <ErrorAlert error={conv.error} />
      </Stack>
    );
  const c = conv.data;
  return (
    <Stack gap="lg">
      {header}
      <Paper withBorder p="md">
        <Group justify="space-between" align="flex-start">
          <Stack gap={4}>
            <Title order={3} ff="monospace">
              {id}
            </Title>
            <Text size="sm" c="dimmed">
              Namespace <Code>{c?.namespace}</Code> · created {fmtDate(c?.created_at)} · last activity{' '}
              {fmtDate(c?.updated_at)}
            </Text>
          </Stack>
          <Stack gap={4} align="flex-end">
            <Button
              component={Link}
              to={playgroundHref(id, project?.id, c?.sessions?.[0]?.agent_id)}
              size="xs"
              variant="light"
            >
              Continue in playground
            </Button>
            {c?.sessions?.[0]?.agent_id ? (
              <Anchor
                component={Link}
                to={`/evals?agent=${encodeURIComponent(c.sessions[0].agent_id)}&conversation=${encodeURIComponent(id)}`}
                size="sm"
              >
                Evaluate a change on this conversation
              </Anchor>
            ) : null}
            <Anchor
              component={Link}
              to={`/traces?window=7d&conversation_id=${encodeURIComponent(id)}`}
              size="sm"
            >
              Traces of this conversation
            </Anchor>
            {(c?.sessions ?? []).map((s) => (
              <Anchor key={s.workflow_id} href={s.temporal_ui_url} target="_blank" rel="noreferrer" size="sm">
                {agentName(s.agent_id)}: workflow in Temporal UI
              </Anchor>
            ))}
          </Stack>
        </Group>
        {c?.context && Object.keys(c.context).length > 0 && (
          <>
            <Text size="xs" c="dimmed" mt="sm">
              Context
            </Text>
            <Code block>{JSON.stringify(c.context, null, 2)}</Code>
          </>
        )}
      </Paper>

      <Stack gap="xs">
        <Title order={4}>Runs</Title>
        <ErrorAlert error={runs.error} />
        {runs.isLoading ? (
          <Loading what="Loading runs" />
        ) : !runs.data?.length ? (
          <Empty title="No run yet">
            Send this conversation a message (playground or POST /converse) to start a turn.
          </Empty>
        ) : (
          <>
            <RunsTable runs={runs.data} />
            <Pager offset={offset} pageSize={PAGE} count={runs.data.length} onChange={setOffset} />
          </>
        )}
      </Stack>

      <Stack gap="xs">
        <Title order={4}>Transcript</Title>
        <ErrorAlert error={threads.error} />
        <ErrorAlert error={forking.error} />
        {threads.isLoading ? (
          <Loading what="Loading threads" />
        ) : (
          <Transcript
            threads={threads.data ?? []}
            agentName={agentName}
            live={live}
            fork={develops ? fork : undefined}
          />
        )}
      </Stack>
    </Stack>
  );
}
