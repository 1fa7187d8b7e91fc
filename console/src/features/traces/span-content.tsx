import { Code, Stack, Text, Title } from '@mantine/core';
import type { Span } from '../../api/types.js';

/** The GenAI content attributes and how the panel labels them. */
export const CONTENT_KEYS: ReadonlyArray<[key: string, label: string]> = [
  ['gen_ai.input.messages', 'Prompt'],
  ['gen_ai.output.messages', 'Completion'],
  ['gen_ai.tool.call.arguments', 'Tool arguments'],
  ['gen_ai.tool.call.result', 'Tool result'],
];
const RECORDED = 'agent_server.content.recorded';

/** JSON indented when the text is JSON; as it is otherwise. */
function readable(v: unknown): string {
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/**
 * What a model or tool span recorded of its content: the prompt and
 * completion, the tool's arguments and result; or, where the span says
 * nothing was recorded, why there is nothing to show. Other spans: nothing.
 */
export function SpanContent({ span }: { span: Span }) {
  const attrs = (span.attributes ?? {}) as Record<string, unknown>;
  if (!(RECORDED in attrs)) return null;
  const present = CONTENT_KEYS.filter(([k]) => attrs[k] !== undefined);
  return (
    <Stack gap={6} aria-label="Content">
      <Title order={6}>Content</Title>
      {attrs[RECORDED] === false ? (
        <Text size="xs" c="dimmed" data-testid="content-off">
          {attrs['agent_server.project.id']
            ? 'Content recording is off for this project.'
            : 'Content recording is off (OTEL_RECORD_CONTENT).'}{' '}
          Turn on the project&apos;s “Record content” to see prompts, completions and tool calls here.
        </Text>
      ) : present.length === 0 ? (
        <Text size="xs" c="dimmed">
          Nothing was recorded.
        </Text>
      ) : (
        present.map(([k, label]) => (
          <Stack key={k} gap={2}>
            <Text size="xs" fw={600}>
              {label}
            </Text>
            <Code block fz="xs" style={{ maxHeight: 280, overflow: 'auto', whiteSpace: 'pre-wrap' }}>
              {readable(attrs[k])}
            </Code>
          </Stack>
        ))
      )}
    </Stack>
  );
}
