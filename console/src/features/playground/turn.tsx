import { Alert, Anchor, Badge, Button, Group, Loader, Paper, Stack, Text } from '@mantine/core';
import { useMemo, type ReactNode } from 'react';
import { Link } from 'react-router';
import { ErrorAlert } from '../../components/error-alert.js';
import type { Model, PromptVersion } from '../../api/types.js';
import { AuthorizationNeeded } from '../waiting/authorization-needed.js';
import { InputQuestion, questionKey } from '../waiting/input-question.js';
import { useCancel, useDecide, useRun } from './queries.js';
import { useRunEvents } from './run-events.js';
import { StructuredOutput } from './structured.js';
import { ToolCall } from './tool-call.js';
import {
  foldRun,
  isLive,
  isPaused,
  type StepView,
  type ToolCallView,
  type TurnStatus,
  type TurnView,
} from './transcript.js';
import { TurnStats } from './turn-stats.js';

const STATUS_COLOR: Record<TurnStatus, string> = {
  queued: 'gray',
  running: 'blue',
  awaiting_approval: 'orange',
  awaiting_budget: 'orange',
  awaiting_decision: 'grape',
  awaiting_authorization: 'cyan',
  awaiting_input: 'teal',
  completed: 'green',
  failed: 'red',
  cancelled: 'gray',
};

export interface TurnContext {
  projectId: string;
  versions: PromptVersion[];
  /** The project's models (to name the one a turn was tried with). */
  models: Model[];
  schemaName: string | undefined;
}

function UserMessage({ text }: { text: string }) {
  return (
    <Paper p="sm" radius="md" bg="var(--mantine-color-default-hover)" ml="auto" maw="80%">
      <Text size="sm" style={{ whiteSpace: 'pre-wrap' }} data-testid="user-text">
        {text || '(message not found)'}
      </Text>
    </Paper>
  );
}

function Step({ step, renderCall }: { step: StepView; renderCall: (c: ToolCallView) => ReactNode }) {
  return (
    <Stack gap="xs">
      {step.text && (
        <Paper p="sm" radius="md" withBorder maw="90%" opacity={step.invalid ? 0.6 : 1}>
          {step.invalid !== undefined && (
            <Text size="xs" c="orange" mb={4}>
              Not valid against the agent&apos;s schema: the model was asked again.
            </Text>
          )}
          <Text size="sm" style={{ whiteSpace: 'pre-wrap' }} data-testid="assistant-text">
            {step.text}
          </Text>
        </Paper>
      )}
      {step.calls.map(renderCall)}
    </Stack>
  );
}

/** One turn: the user's message, the streamed answer with its tool calls, approvals, and its numbers. */
export function Turn({
  index,
  runId,
  userText,
  ctx,
}: {
  index: number;
  runId: string;
  userText: string;
  ctx: TurnContext;
}) {
  const events = useRunEvents(runId, ctx.projectId);
  const view = useMemo(() => foldRun(events.data?.events ?? []), [events.data]);
  const live = isLive(view.status);
  const run = useRun(runId, ctx.projectId, view.status, !live || isPaused(view.status));
  const decide = useDecide(runId, ctx.projectId);
  const cancel = useCancel(runId, ctx.projectId);
  const decided = new Map((run.data?.approvals ?? []).map((a) => [String(a.id), String(a.decision)]));

  const renderCall = (c: ToolCallView) => {
    const decision = c.state === 'awaiting_approval' ? decided.get(c.id) : undefined;
    const shown: ToolCallView = decision
      ? { ...c, state: 'requested', decision: decision === 'approved' ? 'approved' : 'rejected' }
      : c;
    return (
      <ToolCall
        key={c.key}
        call={shown}
        deciding={decide.isPending}
        onDecide={(approve) =>
          decide.mutate({ approve: approve ? [c.id] : [], reject: approve ? [] : [c.id] })
        }
      />
    );
  };
  const structured = view.output?.structured ?? run.data?.output?.structured;
  // A run whose step events were pruned (RUN_EVENTS_RETENTION_DAYS) still has its answer on the run.
  const answer = view.steps.length === 0 && (view.output?.content ?? run.data?.output?.content);

  return (
    <Stack gap="xs" component="article" aria-label={`Turn ${index}`}>
      <UserMessage text={userText} />
      {view.steps.map((s) => (
        <Step key={s.step} step={s} renderCall={renderCall} />
      ))}
      {answer && (
        <Step
          step={{ step: 1, text: answer, complete: true, restarted: false, calls: [] }}
          renderCall={renderCall}
        />
      )}
      {view.status === 'completed' && ctx.schemaName && (
        <StructuredOutput value={structured} schemaName={ctx.schemaName} />
      )}
      {(run.data?.warnings ?? []).map((w) => (
        <Alert key={w} color="yellow" variant="light" p="xs" title="Warning">
          {w}
        </Alert>
      ))}
      <WaitNotice status={view.status} />
      <McpWait runId={runId} view={view} />
      {view.error && (
        <Alert color="red" title={view.error.code ?? 'The turn failed'}>
          {view.error.message}
        </Alert>
      )}
      {events.error && (
        <Stack gap={4}>
          <ErrorAlert error={events.error} />
          <Button size="xs" variant="default" w="fit-content" onClick={() => void events.refetch()}>
            Reconnect
          </Button>
        </Stack>
      )}
      <ErrorAlert error={decide.error} />
      <ErrorAlert error={cancel.error} />
      <Group gap="sm">
        <Badge size="sm" variant="light" color={STATUS_COLOR[view.status]}>
          {view.status.replace('_', ' ')}
        </Badge>
        {live && !isPaused(view.status) && <Loader size="xs" aria-label="Streaming" />}
        {live && (
          <Button
            size="compact-xs"
            variant="default"
            title="Cancel this turn: the model call or tool call stops; what it produced so far stays"
            loading={cancel.isPending}
            onClick={() => cancel.mutate()}
          >
            Stop
          </Button>
        )}
        <TurnStats run={run.data} view={view} versions={ctx.versions} models={ctx.models} />
      </Group>
    </Stack>
  );
}

const WAITS: Partial<Record<TurnStatus, { title: string; text: string }>> = {
  awaiting_budget: {
    title: 'Waiting for budget',
    text: "Its next model call does not fit in the agent's, the conversation's or the project key's budget: it goes on when the budget is raised or its next period begins.",
  },
  awaiting_decision: {
    title: 'Waiting for a decision',
    text: 'A worker stopped during a call of a non-idempotent tool, so whether it took effect is unknown: someone calls it again or supplies its result.',
  },
};

/** A turn waiting for something other than approval (decided on the Waiting runs page, not here). */
function WaitNotice({ status }: { status: TurnStatus }) {
  const wait = WAITS[status];
  if (!wait) return null;
  return (
    <Alert color="orange" variant="light" p="xs" title={wait.title} role="status">
      {wait.text}{' '}
      <Anchor component={Link} to="/waiting" size="sm">
        Decide in Waiting runs
      </Anchor>
    </Alert>
  );
}

/**
 * A turn whose tool call waits for a person on an MCP server's behalf:
 * answered here (the server's question) or in a new tab (its authorization
 * page), as in Waiting runs. The `run.paused` event says what it waits for.
 */
function McpWait({ runId, view }: { runId: string; view: TurnView }) {
  const { status, pause } = view;
  if (!pause || (status !== 'awaiting_input' && status !== 'awaiting_authorization')) return null;
  const input = status === 'awaiting_input';
  return (
    <Alert
      color={input ? 'teal' : 'cyan'}
      variant="light"
      p="xs"
      title={input ? 'Waiting for your answer' : 'Waiting for authorization'}
      role="status"
    >
      {input ? (
        <InputQuestion key={questionKey(pause)} runId={runId} pause={pause} />
      ) : (
        <AuthorizationNeeded pause={pause} />
      )}
    </Alert>
  );
}

/** A message on its way: shown at once, before the run exists. */
export function SendingTurn({ index, text }: { index: number; text: string }) {
  return (
    <Stack gap="xs" component="article" aria-label={`Turn ${index}`}>
      <UserMessage text={text} />
      <Group gap="xs">
        <Loader size="xs" />
        <Text size="xs" c="dimmed">
          Sending…
        </Text>
      </Group>
    </Stack>
  );
}
