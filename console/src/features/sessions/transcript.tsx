import { Badge, Button, Code, Group, Paper, Stack, Tabs, Text } from '@mantine/core';
import { Empty } from '../../components/empty.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { Loading } from '../../components/loading.js';
import type { Message, Summary, Thread } from '../../api/types.js';
import { contentText, fmtDate, fmtInt, prettyJson } from './format.js';
import { useMessages, useSummaries } from './queries.js';

const ROLE_COLOURS: Record<string, string> = {
  user: 'blue',
  assistant: 'teal',
  tool: 'grape',
  system: 'gray',
};

/** What the transcript offers on each message: a new conversation holding the transcript up to it. */
export interface ForkAction {
  fork: (messageId: string) => void;
  /** The message being forked at while the request is under way. */
  pendingId?: string;
}

function MessageItem({ m, fork }: { m: Message; fork?: ForkAction }) {
  const calls = (m.tool_calls ?? []) as Array<{ id?: string; name?: string; arguments?: string }>;
  const usage = m.usage as { input_tokens?: number; output_tokens?: number } | undefined;
  const text = contentText(m.content);
  return (
    <Paper withBorder p="sm" radius="sm" data-role={m.role} aria-label={`${m.role} message`}>
      <Group justify="space-between" mb={4}>
        <Group gap="xs">
          <Badge color={ROLE_COLOURS[m.role ?? ''] ?? 'gray'} variant="light" size="sm">
            {m.role}
          </Badge>
          {m.tool_call_id && (
            <Text size="xs" c="dimmed">
              result of <Code>{m.tool_call_id}</Code>
            </Text>
          )}
        </Group>
        <Group gap="xs">
          <Text size="xs" c="dimmed">
            {usage ? `${fmtInt(usage.input_tokens)} in / ${fmtInt(usage.output_tokens)} out · ` : ''}
            {fmtDate(m.created_at)}
          </Text>
          {fork && m.id && (
            <Button
              variant="subtle"
              size="compact-xs"
              loading={fork.pendingId === m.id}
              disabled={fork.pendingId !== undefined && fork.pendingId !== m.id}
              onClick={() => fork.fork(m.id!)}
            >
              Fork from here
            </Button>
          )}
        </Group>
      </Group>
      {text && (
        <Text size="sm" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
          {text}
        </Text>
      )}
      {calls.map((c) => (
        <Stack key={c.id} gap={2} mt={4}>
          <Text size="xs">
            calls <Code>{c.name}</Code>{' '}
            <Text span c="dimmed" size="xs">
              ({c.id})
            </Text>
          </Text>
          <Code block>{prettyJson(c.arguments ?? '')}</Code>
        </Stack>
      ))}
    </Paper>
  );
}

/** Where the summarizer replaced the messages above it in the model's context. */
function SummaryItem({ s }: { s: Summary }) {
  const usage = s.usage as { input_tokens?: number; output_tokens?: number } | null | undefined;
  return (
    <Paper withBorder p="sm" radius="sm" bg="var(--mantine-color-yellow-light)" aria-label="summary">
      <Group justify="space-between" mb={4}>
        <Badge color="yellow" variant="light" size="sm">
          summary of the messages above
        </Badge>
        <Text size="xs" c="dimmed">
          {usage ? `${fmtInt(usage.input_tokens)} in / ${fmtInt(usage.output_tokens)} out · ` : ''}
          {fmtDate(s.created_at)}
        </Text>
      </Group>
      <Text size="sm" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
        {s.content}
      </Text>
    </Paper>
  );
}

function ThreadMessages({ threadId, live, fork }: { threadId: string; live: boolean; fork?: ForkAction }) {
  const q = useMessages(threadId, live);
  const summaries = useSummaries(threadId, live).data ?? [];
  if (q.isLoading) return <Loading what="Loading messages" />;
  if (q.error) return <ErrorAlert error={q.error} />;
  const messages = q.data?.pages.flat() ?? [];
  if (!messages.length)
    return (
      <Empty title="No message in this thread yet">
        Its first turn has not been stored yet; it appears here when it is.
      </Empty>
    );
  return (
    <Stack gap="xs">
      {messages.map((m) => (
        <Stack key={m.id} gap="xs">
          <MessageItem m={m} fork={fork} />
          {summaries
            .filter((s) => s.through_message_id === m.id)
            .map((s) => (
              <SummaryItem key={s.id} s={s} />
            ))}
        </Stack>
      ))}
      {q.hasNextPage && (
        <Button
          variant="default"
          size="xs"
          loading={q.isFetchingNextPage}
          onClick={() => void q.fetchNextPage()}
        >
          Load later messages
        </Button>
      )}
    </Stack>
  );
}

/**
 * The transcript: one tab per thread (one thread per agent that took part),
 * messages oldest first, each summary after the last message it stands for;
 * with `fork`, each message offers "Fork from here".
 */
export function Transcript({
  threads,
  agentName,
  live,
  fork,
}: {
  threads: Thread[];
  agentName: (id: string | null | undefined) => string;
  live: boolean;
  fork?: ForkAction;
}) {
  if (!threads.length)
    return (
      <Empty title="No thread yet">A thread is made when an agent answers its first message here.</Empty>
    );
  const first = threads[0]?.id ?? null;
  return (
    <Tabs defaultValue={first} keepMounted={false}>
      <Tabs.List>
        {threads.map((t) => (
          <Tabs.Tab key={t.id} value={t.id ?? ''}>
            {agentName(t.agent_id)}
          </Tabs.Tab>
        ))}
      </Tabs.List>
      {threads.map((t) => (
        <Tabs.Panel key={t.id} value={t.id ?? ''} pt="sm">
          <ThreadMessages threadId={t.id ?? ''} live={live} fork={fork} />
        </Tabs.Panel>
      ))}
    </Tabs>
  );
}
