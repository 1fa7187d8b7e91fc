import { Anchor, Badge, Group, Paper, SimpleGrid, Stack, Text } from '@mantine/core';
import { Link } from 'react-router';
import type { EvalResult } from '../../api/types.js';
import { contentText, fmtCost, fmtDuration, fmtInt } from '../sessions/format.js';

const STATUS_COLOURS: Record<string, string> = {
  completed: 'green',
  failed: 'red',
  diverged: 'orange',
  skipped: 'gray',
};

/** One answer with its figures: the original's (or the expected output), or a variant's. */
function Answer(props: {
  title: string;
  text: string | null | undefined;
  figures?: { tokens?: number | null; cost?: number | null; latency?: number | null };
  children?: React.ReactNode;
}) {
  const { figures } = props;
  return (
    <Paper withBorder p="sm" radius="sm" aria-label={props.title} role="region">
      <Stack gap={6}>
        <Group justify="space-between" gap="xs">
          <Text size="sm" fw={600}>
            {props.title}
          </Text>
          {props.children}
        </Group>
        <Text size="sm" style={{ whiteSpace: 'pre-wrap' }}>
          {props.text ?? '—'}
        </Text>
        {figures ? (
          <Text size="xs" c="dimmed">
            {fmtInt(figures.tokens)} tokens · {fmtCost(figures.cost)} · {fmtDuration(figures.latency)}
          </Text>
        ) : null}
      </Stack>
    </Paper>
  );
}

function variantBadges(r: EvalResult) {
  return (
    <Group gap={4}>
      <Badge size="xs" color={STATUS_COLOURS[r.status ?? ''] ?? 'gray'} variant="light">
        {r.status}
      </Badge>
      {r.exact_match ? (
        <Badge size="xs" color="green" variant="outline">
          exact match
        </Badge>
      ) : null}
      {r.schema_valid === false ? (
        <Badge size="xs" color="red" variant="outline">
          schema invalid
        </Badge>
      ) : null}
      {r.judge_score != null ? (
        <Badge size="xs" color="blue" variant="outline" title={r.judge_reason ?? undefined}>
          judge {r.judge_score.toFixed(2)}
        </Badge>
      ) : null}
    </Group>
  );
}

/** What a variant's turn answered: its text, or why it has none. */
function variantText(r: EvalResult): string {
  if (r.status === 'skipped') return 'Not run: an earlier turn diverged.';
  if (r.output) return r.output;
  return r.error ? `${r.error.code}: ${r.error.message}` : '—';
}

/**
 * Each user turn with the original answer (or the dataset's expected output)
 * beside every variant's, with tokens, cost and latency: the
 * experiment-compare view.
 */
export function Comparison({ results, variants }: { results: EvalResult[]; variants: string[] }) {
  const turns = new Map<string, EvalResult[]>();
  for (const r of results) {
    const key = `${r.case_index}:${r.turn_index}`;
    turns.set(key, [...(turns.get(key) ?? []), r]);
  }
  return (
    <Stack gap="lg">
      {[...turns.values()].map((rows) => {
        const first = rows[0]!;
        const original = first.original;
        return (
          <Paper
            key={`${first.case_index}:${first.turn_index}`}
            p="sm"
            withBorder
            radius="md"
            aria-label={`Turn ${(first.turn_index ?? 0) + 1} of ${first.case_key}`}
            role="group"
          >
            <Stack gap="xs">
              <Text size="xs" c="dimmed">
                {first.case_key} · turn {(first.turn_index ?? 0) + 1}
              </Text>
              <Text size="sm">
                <b>User:</b> {contentText(first.input)}
              </Text>
              <SimpleGrid cols={{ base: 1, md: variants.length + 1 }}>
                <Answer
                  title={original ? 'Original' : 'Expected'}
                  text={original ? original.output : contentText(first.expected)}
                  {...(original
                    ? {
                        figures: {
                          tokens: (original.input_tokens ?? 0) + (original.output_tokens ?? 0),
                          cost: original.cost_usd,
                          latency: original.latency_ms,
                        },
                      }
                    : {})}
                />
                {variants.map((name) => {
                  const r = rows.find((x) => x.variant === name);
                  if (!r) return <Answer key={name} title={name} text="Not run yet." />;
                  return (
                    <Answer
                      key={name}
                      title={name}
                      text={variantText(r)}
                      figures={{
                        tokens: (r.input_tokens ?? 0) + (r.output_tokens ?? 0),
                        cost: r.cost_usd,
                        latency: r.latency_ms,
                      }}
                    >
                      {variantBadges(r)}
                    </Answer>
                  );
                })}
              </SimpleGrid>
              {rows.some((r) => r.run_id) ? (
                <Group gap="md">
                  {rows
                    .filter((r) => r.run_id)
                    .map((r) => (
                      <Anchor
                        key={r.variant}
                        component={Link}
                        to={`/sessions/${encodeURIComponent(r.conversation_id ?? '')}`}
                        size="xs"
                      >
                        {r.variant}&apos;s transcript
                      </Anchor>
                    ))}
                </Group>
              ) : null}
            </Stack>
          </Paper>
        );
      })}
    </Stack>
  );
}
