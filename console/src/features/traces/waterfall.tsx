import { Group, SegmentedControl, Stack, Text } from '@mantine/core';
import { useMemo, useState } from 'react';
import { fmtDuration } from '../sessions/format.js';
import { foldSpans, isPlumbing, layoutSpans, ticks } from './layout.js';
import type { Span } from '../../api/types.js';
import { SpanRow } from './span-row.js';
import css from './waterfall.module.css';

type View = 'all' | 'llm';
const VIEW_KEY = 'agent-server.traces.view';

/** The waterfall's view, remembered in this browser: every span, or model calls and tools with the plumbing folded. */
function useView(): [View, (v: View) => void] {
  const [view, setView] = useState<View>(() => (localStorage.getItem(VIEW_KEY) === 'llm' ? 'llm' : 'all'));
  return [
    view,
    (v) => {
      localStorage.setItem(VIEW_KEY, v);
      setView(v);
    },
  ];
}

/**
 * Spans as nested bars on the trace's time axis; clicking a span selects it.
 * The "LLM and tools" view folds database queries and outgoing HTTP
 * requests away (their children hang under the nearest span shown).
 */
export function Waterfall({
  spans,
  selectedId,
  onSelect,
}: {
  spans: Span[];
  selectedId: string | null;
  onSelect: (spanId: string) => void;
}) {
  const [view, setView] = useView();
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set());
  const shown = useMemo(() => (view === 'llm' ? foldSpans(spans, isPlumbing) : spans), [spans, view]);
  const layout = useMemo(() => layoutSpans(shown, collapsed), [shown, collapsed]);
  const axis = useMemo(() => ticks(layout.totalMs), [layout.totalMs]);
  const pct = axis.map((t) => (t / layout.totalMs) * 100).filter((p) => p <= 100);
  const folded = spans.length - shown.length;
  const toggle = (id: string) =>
    setCollapsed((prev) => {
      const next = new Set(prev);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  return (
    <Stack gap={6}>
      <Group justify="space-between">
        <SegmentedControl
          size="xs"
          aria-label="Waterfall view"
          value={view}
          onChange={setView}
          data={[
            { value: 'all', label: 'All spans' },
            { value: 'llm', label: 'LLM and tools' },
          ]}
        />
        {view === 'llm' && folded > 0 && (
          <Text size="xs" c="dimmed">
            {folded} database and HTTP span{folded > 1 ? 's' : ''} folded
          </Text>
        )}
      </Group>
      <section className={css.grid} aria-label="Trace waterfall">
        <div className={css.axis}>
          <Group px="xs" gap={4}>
            <Text size="xs" fw={600}>
              Span
            </Text>
            <Text size="xs" c="dimmed">
              ({layout.rows.length} shown of {spans.length})
            </Text>
          </Group>
          <div className={css.axisTrack} aria-hidden>
            {axis.map((t, i) =>
              pct[i] === undefined ? null : (
                <span key={t} className={css.tick} style={{ left: `${pct[i]}%` }}>
                  {fmtDuration(t)}
                </span>
              ),
            )}
          </div>
        </div>
        {layout.rows.map((row) => {
          const id = row.span.span_id ?? '';
          return (
            <SpanRow
              key={id}
              row={row}
              totalMs={layout.totalMs}
              gridPct={pct}
              selected={selectedId === id}
              collapsed={collapsed.has(id)}
              onSelect={() => onSelect(id)}
              onToggle={() => toggle(id)}
            />
          );
        })}
      </section>
    </Stack>
  );
}
