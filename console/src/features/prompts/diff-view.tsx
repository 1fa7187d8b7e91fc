import { Badge, Group, Paper, ScrollArea, Select, Stack, Table, Text } from '@mantine/core';
import { useMemo } from 'react';
import { diffLines, diffStats, sideBySide, type Side } from './diff.js';
import type { PromptVersion } from '../../api/types.js';
import classes from './diff-view.module.css';

function Cell({ side }: { side?: Side }) {
  if (!side)
    return (
      <>
        <Table.Td className={classes.num} />
        <Table.Td className={classes.empty} />
      </>
    );
  const cls = side.op === 'del' ? classes.del : side.op === 'add' ? classes.add : undefined;
  const mark = side.op === 'del' ? '−' : side.op === 'add' ? '+' : ' ';
  return (
    <>
      <Table.Td className={classes.num}>{side.line}</Table.Td>
      <Table.Td className={`${classes.text} ${cls ?? ''}`} data-op={side.op}>
        <span className={classes.mark} aria-hidden>
          {mark}
        </span>
        {side.text}
      </Table.Td>
    </>
  );
}

/** Two versions side by side: removed lines on the left in red, added on the right in green. */
export function DiffView({
  versions,
  from,
  to,
  onChange,
}: {
  versions: PromptVersion[];
  from: number;
  to: number;
  onChange: (from: number, to: number) => void;
}) {
  const a = versions.find((v) => v.version === from);
  const b = versions.find((v) => v.version === to);
  const lines = useMemo(() => diffLines(a?.template ?? '', b?.template ?? ''), [a, b]);
  const rows = useMemo(() => sideBySide(lines), [lines]);
  const stats = diffStats(lines);
  const options = versions.map((v) => ({
    value: String(v.version),
    label: `v${v.version}: ${v.commit_message}`,
  }));
  return (
    <Stack>
      <Group align="flex-end">
        <Select
          label="Old version"
          data={options}
          value={String(from)}
          onChange={(v) => v && onChange(Number(v), to)}
          allowDeselect={false}
          w={320}
        />
        <Select
          label="New version"
          data={options}
          value={String(to)}
          onChange={(v) => v && onChange(from, Number(v))}
          allowDeselect={false}
          w={320}
        />
        <Group gap="xs" mb={6}>
          <Badge color="green" variant="light">
            +{stats.added}
          </Badge>
          <Badge color="red" variant="light">
            −{stats.removed}
          </Badge>
        </Group>
      </Group>
      <Paper withBorder>
        <ScrollArea>
          <Table className={classes.table} aria-label={`Diff of v${from} and v${to}`}>
            <colgroup>
              <col className={classes.numCol} />
              <col />
              <col className={classes.numCol} />
              <col />
            </colgroup>
            <Table.Thead>
              <Table.Tr>
                <Table.Th colSpan={2}>v{from}</Table.Th>
                <Table.Th colSpan={2}>v{to}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((r, i) => (
                <Table.Tr key={i}>
                  <Cell side={r.left} />
                  <Cell side={r.right} />
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollArea>
        {rows.length === 0 && (
          <Text p="md" size="sm" c="dimmed">
            Both templates are empty.
          </Text>
        )}
      </Paper>
    </Stack>
  );
}
