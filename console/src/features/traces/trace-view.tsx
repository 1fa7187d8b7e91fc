import { Anchor, Badge, Breadcrumbs, Button, Code, Group, Stack, Text, Title } from '@mantine/core';
import { useMemo, useState } from 'react';
import { Link, useParams } from 'react-router';
import { ApiError } from '../../api/client.js';
import { Empty } from '../../components/empty.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { Loading } from '../../components/loading.js';
import { fmtCost, fmtDate, fmtDuration, fmtInt } from '../sessions/format.js';
import { genAi } from './genai.js';
import type { Span } from '../../api/types.js';
import { useTrace } from './queries.js';
import { ServiceDot } from './service-dot.js';
import { SpanPanel } from './span-panel.js';
import { Waterfall } from './waterfall.js';

function Summary({ spans }: { spans: Span[] }) {
  const starts = spans.map((s) => Date.parse(s.start_time ?? '') || 0);
  const start = Math.min(...starts);
  const end = Math.max(...spans.map((s, i) => starts[i]! + Number(s.duration_ms ?? 0)));
  const services = [...new Set(spans.map((s) => s.service_name ?? ''))];
  const errors = spans.filter((s) => s.status_code === 'ERROR').length;
  const calls = spans.map(genAi).filter((a) => a !== undefined);
  const sum = (f: (a: (typeof calls)[number]) => number | undefined) =>
    calls.reduce((t, a) => t + (f(a) ?? 0), 0);
  const anyCost = calls.some((a) => a.costUsd !== undefined);
  return (
    <Group gap="lg" wrap="wrap">
      <Text size="sm">
        {fmtDate(new Date(start).toISOString())} · <b>{fmtDuration(end - start)}</b> · {spans.length} spans
      </Text>
      {errors > 0 && <Badge color="red">{errors} errors</Badge>}
      {calls.length > 0 && (
        <Text size="sm">
          {calls.length} model call{calls.length > 1 ? 's' : ''} · {fmtInt(sum((a) => a.inputTokens))} in /{' '}
          {fmtInt(sum((a) => a.outputTokens))} out tokens
          {anyCost ? ` · ${fmtCost(sum((a) => a.costUsd))}` : ''}
        </Text>
      )}
      <Group gap="xs" aria-label="Services">
        {services.map((s) => (
          <Group key={s} gap={4}>
            <ServiceDot service={s} size={10} />
            <Text size="xs">{s}</Text>
          </Group>
        ))}
      </Group>
    </Group>
  );
}

/** One trace: a summary, the waterfall, and the selected span's attributes beside it. */
export function TraceView() {
  const traceId = useParams().traceId ?? '';
  const q = useTrace(traceId);
  const [selected, setSelected] = useState<string | null>(null);
  const spans = useMemo(() => q.data?.spans ?? [], [q.data]);
  const startMs = useMemo(() => Math.min(...spans.map((s) => Date.parse(s.start_time ?? '') || 0)), [spans]);
  const span = spans.find((s) => s.span_id === selected);
  const root = spans.find((s) => !s.parent_span_id || !spans.some((p) => p.span_id === s.parent_span_id));
  const notFound = q.error instanceof ApiError && q.error.status === 404;

  return (
    <Stack gap="md">
      <Breadcrumbs>
        <Anchor component={Link} to="/traces">
          Traces
        </Anchor>
        <Code>{traceId}</Code>
      </Breadcrumbs>
      <Group justify="space-between">
        <Title order={3}>{root?.name ?? 'Trace'}</Title>
        <Button size="xs" variant="default" onClick={() => void q.refetch()} loading={q.isFetching}>
          Reload
        </Button>
      </Group>
      {!/^[0-9a-f]{32}$/.test(traceId) ? (
        <Empty title="Not a trace id">
          A trace id is 32 lowercase hex digits, as in a run&apos;s trace_id or the X-Trace-Id header.
        </Empty>
      ) : q.isLoading ? (
        <Loading what="Loading the trace" />
      ) : notFound || (q.data && !spans.length) ? (
        <Empty title="No span of this trace is stored">
          Spans are written a moment after their request ends: reload in a few seconds. A trace older than the
          retention period, or one that was not sampled, has none.
        </Empty>
      ) : q.error ? (
        <ErrorAlert error={q.error} />
      ) : (
        <>
          <Summary spans={spans} />
          <div style={{ display: 'flex', gap: 'var(--mantine-spacing-md)', alignItems: 'flex-start' }}>
            <div style={{ flex: 1, minWidth: 0 }}>
              <Waterfall spans={spans} selectedId={selected} onSelect={setSelected} />
              <Text size="xs" c="dimmed" mt={4}>
                Click a span for its attributes and events.
              </Text>
            </div>
            {span && (
              <div
                style={{
                  width: 460,
                  flex: 'none',
                  position: 'sticky',
                  top: 64,
                  maxHeight: 'calc(100vh - 80px)',
                  overflow: 'auto',
                }}
              >
                <SpanPanel span={span} traceStartMs={startMs} onClose={() => setSelected(null)} />
              </div>
            )}
          </div>
        </>
      )}
    </Stack>
  );
}
