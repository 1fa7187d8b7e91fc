import { Badge, CloseButton, Code, Group, Paper, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { fmtCost, fmtDate, fmtDuration, fmtInt } from '../sessions/format.js';
import { genAi } from './genai.js';
import type { Span } from '../../api/types.js';
import { ServiceDot } from './service-dot.js';
import { serviceColour } from './services.js';
import { CONTENT_KEYS, SpanContent } from './span-content.js';

const STATUS_COLOURS: Record<string, string> = { ERROR: 'red', OK: 'green', UNSET: 'gray' };

const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

function Figure({ label, value }: { label: string; value: string }) {
  return (
    <Stack gap={0}>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text fw={700} size="lg">
        {value}
      </Text>
    </Stack>
  );
}

function Attributes({ attrs }: { attrs: Record<string, unknown> }) {
  const keys = Object.keys(attrs).sort();
  if (!keys.length)
    return (
      <Text size="xs" c="dimmed">
        No attributes.
      </Text>
    );
  return (
    <Table aria-label="Attributes" fz="xs" withRowBorders verticalSpacing={4}>
      <Table.Tbody>
        {keys.map((k) => (
          <Table.Tr key={k}>
            <Table.Td style={{ verticalAlign: 'top', width: '50%', wordBreak: 'break-all' }}>
              <Code fz="xs">{k}</Code>
            </Table.Td>
            <Table.Td style={{ wordBreak: 'break-word', whiteSpace: 'pre-wrap' }}>{show(attrs[k])}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/** The selected span in full: timing, status, GenAI figures, every attribute and event. */
export function SpanPanel({
  span,
  traceStartMs,
  onClose,
}: {
  span: Span;
  traceStartMs: number;
  onClose: () => void;
}) {
  const ai = genAi(span);
  // Content has its own section; the table keeps the rest.
  const attrs = Object.fromEntries(
    Object.entries((span.attributes ?? {}) as Record<string, unknown>).filter(
      ([k]) => !CONTENT_KEYS.some(([c]) => c === k),
    ),
  );
  const events = (span.events ?? []) as Array<{
    name?: string;
    time?: string;
    attributes?: Record<string, unknown>;
  }>;
  const offset = (Date.parse(span.start_time ?? '') || 0) - traceStartMs;
  return (
    <Paper withBorder p="md" radius="md" component="aside" aria-label="Span details">
      <Stack gap="sm">
        <Group justify="space-between" wrap="nowrap" align="flex-start">
          <Title order={5} style={{ wordBreak: 'break-word' }}>
            {span.name}
          </Title>
          <CloseButton onClick={onClose} aria-label="Close span details" />
        </Group>
        <Group gap="xs">
          <Badge
            color={serviceColour(span.service_name)}
            variant="light"
            tt="none"
            leftSection={<ServiceDot service={span.service_name} />}
          >
            {span.service_name}
          </Badge>
          <Badge variant="outline" color="gray">
            {span.kind}
          </Badge>
          <Badge color={STATUS_COLOURS[span.status_code ?? ''] ?? 'gray'}>{span.status_code}</Badge>
        </Group>
        {span.status_message && (
          <Text size="sm" c="red">
            {span.status_message}
          </Text>
        )}
        <Text size="xs" c="dimmed">
          {fmtDuration(Number(span.duration_ms ?? 0))} · starts at +{fmtDuration(offset)} ·{' '}
          {fmtDate(span.start_time)}
        </Text>
        <Text size="xs" c="dimmed">
          span <Code fz="xs">{span.span_id}</Code>
          {span.parent_span_id ? (
            <>
              {' '}
              · parent <Code fz="xs">{span.parent_span_id}</Code>
            </>
          ) : null}
        </Text>
        {ai && (
          <Paper bg="var(--mantine-color-violet-light)" p="sm" radius="sm" aria-label="Model call">
            <Text size="xs" c="var(--mantine-color-violet-light-color)" fw={600} mb={4}>
              Model call{ai.provider ? ` · ${ai.provider}` : ''}
              {ai.operation ? ` · ${ai.operation}` : ''}
            </Text>
            <SimpleGrid cols={2} spacing="xs">
              <Figure label="Model" value={ai.model ?? '—'} />
              <Figure label="Cost" value={fmtCost(ai.costUsd)} />
              <Figure label="Input tokens" value={fmtInt(ai.inputTokens)} />
              <Figure label="Output tokens" value={fmtInt(ai.outputTokens)} />
            </SimpleGrid>
          </Paper>
        )}
        <SpanContent span={span} />
        <Title order={6}>Attributes</Title>
        <Attributes attrs={attrs} />
        <Title order={6}>Events</Title>
        {events.length === 0 ? (
          <Text size="xs" c="dimmed">
            No events.
          </Text>
        ) : (
          events.map((e, i) => (
            <Stack key={`${e.name}-${i}`} gap={2}>
              <Text size="xs" fw={600}>
                {e.name}{' '}
                <Text span size="xs" c="dimmed">
                  {e.time ? `+${fmtDuration(Date.parse(e.time) - traceStartMs)}` : ''}
                </Text>
              </Text>
              {e.attributes && <Attributes attrs={e.attributes} />}
            </Stack>
          ))
        )}
      </Stack>
    </Paper>
  );
}
