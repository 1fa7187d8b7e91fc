import { Badge, Button, Code, Group, Paper, Stack, Text } from '@mantine/core';
import { formatMs, prettyJson } from './format.js';
import { SANDBOX_TOOL, sandboxResult, type CallState, type ToolCallView } from './transcript.js';

const STATE: Record<CallState, { label: string; color: string }> = {
  requested: { label: 'requested', color: 'gray' },
  awaiting_approval: { label: 'awaiting approval', color: 'orange' },
  running: { label: 'running', color: 'blue' },
  done: { label: 'done', color: 'green' },
  error: { label: 'error', color: 'red' },
  declined: { label: 'declined', color: 'gray' },
};

function Block({ label, children, color }: { label: string; children: string; color?: string }) {
  return (
    <div>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Code block c={color} style={{ maxHeight: 240, overflow: 'auto', whiteSpace: 'pre-wrap' }}>
        {children}
      </Code>
    </div>
  );
}

function SandboxResult({ call }: { call: ToolCallView }) {
  const r = sandboxResult(call.output);
  if (!r) return call.output ? <Block label="Result">{call.output}</Block> : null;
  const exit = call.exitCode ?? r.exit_code;
  return (
    <Stack gap={4}>
      <Group gap="xs">
        {exit !== undefined && exit !== null && (
          <Badge color={exit === 0 ? 'green' : 'red'} variant="light">
            exit code {exit}
          </Badge>
        )}
        <Badge color="gray" variant="light" tt="none">
          {formatMs(call.durationMs ?? r.duration_ms)}
        </Badge>
        {call.timedOut && <Badge color="red">timed out</Badge>}
      </Group>
      {r.error && <Block label="Error">{r.error}</Block>}
      {r.stdout ? <Block label="stdout">{r.stdout}</Block> : null}
      {r.stderr ? (
        <Block label="stderr" color="red">
          {r.stderr}
        </Block>
      ) : null}
    </Stack>
  );
}

/** A sandbox command's `code`, else the arguments as the model sent them. */
function argumentsText(call: ToolCallView): string {
  if (call.name === SANDBOX_TOOL && call.arguments) {
    try {
      const code = (JSON.parse(call.arguments) as { code?: unknown }).code;
      if (typeof code === 'string') return code;
    } catch {
      // shown as sent
    }
  }
  return prettyJson(call.arguments);
}

export function ToolCall({
  call,
  onDecide,
  deciding,
}: {
  call: ToolCallView;
  onDecide?: (approve: boolean) => void;
  deciding?: boolean;
}) {
  const state = STATE[call.state];
  const sandbox = call.name === SANDBOX_TOOL;
  return (
    <Paper withBorder p="xs" radius="sm" component="section" aria-label={`Tool call ${call.name}`}>
      <Stack gap={6}>
        <Group gap="xs" justify="space-between">
          <Group gap="xs">
            <Text size="sm" fw={600}>
              {sandbox ? 'sandbox' : 'tool'} <Code>{call.name}</Code>
            </Text>
            {call.server && (
              <Badge size="sm" variant="outline" tt="none">
                {call.server}
              </Badge>
            )}
          </Group>
          <Group gap={4}>
            {call.decision && (
              <Badge size="sm" variant="light" color={call.decision === 'approved' ? 'green' : 'gray'}>
                {call.decision}
                {call.decidedBy === 'timeout' ? ' (timeout)' : ''}
              </Badge>
            )}
            <Badge size="sm" color={state.color}>
              {state.label}
            </Badge>
          </Group>
        </Group>
        {call.arguments !== undefined && (
          <Block label={sandbox ? 'Command' : 'Arguments'}>{argumentsText(call)}</Block>
        )}
        {sandbox ? (
          <SandboxResult call={call} />
        ) : (
          call.output !== undefined && (
            <Block label="Result" color={call.state === 'error' ? 'red' : undefined}>
              {prettyJson(call.output)}
            </Block>
          )
        )}
        {call.state === 'awaiting_approval' && onDecide && (
          <Group gap="xs">
            <Button
              size="xs"
              color="green"
              loading={deciding}
              aria-label={`Approve ${call.name}`}
              onClick={() => onDecide(true)}
            >
              Approve
            </Button>
            <Button
              size="xs"
              variant="default"
              disabled={deciding}
              aria-label={`Decline ${call.name}`}
              onClick={() => onDecide(false)}
            >
              Decline
            </Button>
          </Group>
        )}
      </Stack>
    </Paper>
  );
}
