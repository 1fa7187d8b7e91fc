import { Group, Text } from '@mantine/core';
import { useMemo, useState } from 'react';
import { fmtDuration } from '../sessions/format.js';
import { layoutSpans, ticks } from './layout.js';
import type { Span } from '../../api/types.js';
import { SpanRow } from './span-row.js';
import css from './waterfall.module.css';

/** Spans as nested bars on the trace's time axis; clicking a span selects it. */
export function Waterfall({
  spans,
  selectedId,
  onSelect,
}: {
  spans: Span[];
  selectedId: string | null;
  onSelect: (spanId: string) => void;
}) {
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set());
  const layout = useMemo(() => layoutSpans(spans, collapsed), [spans, collapsed]);
  const axis = useMemo(() => ticks(layout.totalMs), [layout.totalMs]);
  const pct = axis.map((t) => (t / layout.totalMs) * 100).filter((p) => p <= 100);
  const toggle = (id: string) =>
    setCollapsed((prev) => {
      const next = new Set(prev);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  return (
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
  );
}
