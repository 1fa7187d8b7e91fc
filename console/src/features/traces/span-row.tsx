import { ActionIcon, Text, UnstyledButton } from '@mantine/core';
import { fmtDuration, fmtInt } from '../sessions/format.js';
import { genAi } from './genai.js';
import type { Row } from './layout.js';
import { colourVar, serviceColour } from './services.js';
import css from './waterfall.module.css';

const INDENT = 14;

/** One span: its name (indented by depth) on the left, its bar on the time axis on the right. */
export function SpanRow({
  row,
  totalMs,
  gridPct,
  selected,
  collapsed,
  onSelect,
  onToggle,
}: {
  row: Row;
  totalMs: number;
  gridPct: number[];
  selected: boolean;
  collapsed: boolean;
  onSelect: () => void;
  onToggle: () => void;
}) {
  const { span, depth } = row;
  const colour = serviceColour(span.service_name);
  const error = span.status_code === 'ERROR';
  const left = (row.offsetMs / totalMs) * 100;
  const width = Math.max((row.durationMs / totalMs) * 100, 0.15);
  const ai = genAi(span);
  // The duration (and model figures) go where there is room: after the bar, before it, or inside a wide one.
  const place = left + width < 70 ? 'after' : left > 30 ? 'before' : 'inside';
  const labelPos =
    place === 'after'
      ? { left: `calc(${left + width}% + 4px)` }
      : place === 'before'
        ? { right: `calc(${100 - left}% + 4px)` }
        : { left: `calc(${left}% + 4px)` };
  return (
    <div className={css.row} data-selected={selected || undefined} data-span-name={span.name}>
      <div className={css.label} style={{ paddingLeft: depth * INDENT }}>
        {row.hasChildren ? (
          <ActionIcon
            size="xs"
            variant="subtle"
            color="gray"
            onClick={onToggle}
            aria-label={`${collapsed ? 'Expand' : 'Collapse'} ${span.name}`}
            aria-expanded={!collapsed}
          >
            {collapsed ? '▸' : '▾'}
          </ActionIcon>
        ) : (
          <span className={css.spacer} />
        )}
        <span className={css.dot} style={{ background: colourVar(colour) }} title={span.service_name} />
        <UnstyledButton className={css.name} onClick={onSelect} aria-pressed={selected} title={span.name}>
          <Text size="xs" truncate c={error ? 'red' : undefined} fw={selected ? 700 : 400}>
            {span.name}
          </Text>
        </UnstyledButton>
      </div>
      <div className={css.track} onClick={onSelect}>
        {gridPct.map((p) => (
          <span key={p} className={css.gridline} style={{ left: `${p}%` }} />
        ))}
        <div
          className={css.bar}
          style={{
            left: `${left}%`,
            width: `${width}%`,
            background: colourVar(colour, error ? 3 : 5),
            outline: error ? `2px solid ${colourVar('red', 7)}` : undefined,
          }}
        />
        <span className={css.duration} data-place={place} style={labelPos}>
          <Text span size="10px" c={place === 'inside' ? 'white' : 'dimmed'}>
            {fmtDuration(row.durationMs)}
          </Text>
          {ai && (
            <Text span size="10px" c={place === 'inside' ? 'white' : 'violet.7'} fw={600}>
              {' '}
              · {ai.model ?? 'model'} · {fmtInt(ai.inputTokens)}→{fmtInt(ai.outputTokens)} tok
            </Text>
          )}
        </span>
      </div>
    </div>
  );
}
