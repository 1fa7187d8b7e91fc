import { Anchor, Button, Group, Progress, Stack, Table, Text, Title } from '@mantine/core';
import { Link, useParams } from 'react-router';
import type { Eval, EvalTotals } from '../../api/types.js';
import { Empty } from '../../components/empty.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { Loading } from '../../components/loading.js';
import { fmtCost, fmtDuration, fmtInt, fmtPercent } from '../sessions/format.js';
import { Comparison } from './comparison.js';
import { EvalStatus, Verdict } from './eval-status.js';
import { EVAL_LIVE, useCancelEval, useEval, useEvalResults } from './queries.js';
import { useCan } from '../../app/auth.js';

const ratio = (x: number | null | undefined) => (x == null ? '—' : `${x.toFixed(2)}×`);

/** Per-variant totals, with the original's cost and latency beside the variant's. */
function Totals({ totals }: { totals: EvalTotals[] }) {
  return (
    <Table striped aria-label="Totals">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Variant</Table.Th>
          <Table.Th ta="right">Turns</Table.Th>
          <Table.Th ta="right">Diverged</Table.Th>
          <Table.Th ta="right">Failed</Table.Th>
          <Table.Th ta="right">Exact match</Table.Th>
          <Table.Th ta="right">Judge</Table.Th>
          <Table.Th ta="right">Tokens</Table.Th>
          <Table.Th ta="right">Cost (original)</Table.Th>
          <Table.Th ta="right">Cost ratio</Table.Th>
          <Table.Th ta="right">Latency (original)</Table.Th>
          <Table.Th>Verdict</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {totals.map((t) => (
          <Table.Tr key={t.variant}>
            <Table.Td>{t.variant}</Table.Td>
            <Table.Td ta="right">{t.turns}</Table.Td>
            <Table.Td ta="right">{t.diverged}</Table.Td>
            <Table.Td ta="right">{t.failed}</Table.Td>
            <Table.Td ta="right">{fmtPercent(t.exact_match_rate)}</Table.Td>
            <Table.Td ta="right">{t.mean_judge_score == null ? '—' : t.mean_judge_score.toFixed(2)}</Table.Td>
            <Table.Td ta="right">{fmtInt(t.input_tokens + t.output_tokens)}</Table.Td>
            <Table.Td ta="right">
              {fmtCost(t.cost_usd)} ({fmtCost(t.original_cost_usd)})
            </Table.Td>
            <Table.Td ta="right">{ratio(t.cost_ratio)}</Table.Td>
            <Table.Td ta="right">
              {fmtDuration(t.mean_latency_ms)} ({fmtDuration(t.original_mean_latency_ms)})
            </Table.Td>
            <Table.Td>
              <Group gap={4}>
                <Verdict passed={t.passed} />
                {t.failures.length ? (
                  <Text size="xs" c="red">
                    {t.failures.join('; ')}
                  </Text>
                ) : null}
              </Group>
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

function Header({ ev }: { ev: Eval }) {
  const cancel = useCancelEval(ev.id ?? '');
  const develops = useCan()('develop');
  const total = ev.progress?.turns_total ?? 0;
  const done = ev.progress?.turns_done ?? 0;
  return (
    <Stack gap="xs">
      <Group justify="space-between">
        <Group gap="sm">
          <Title order={3}>Eval {ev.id?.slice(0, 8)}</Title>
          <EvalStatus status={ev.status} />
          <Verdict passed={ev.passed} />
        </Group>
        {develops && EVAL_LIVE.has(ev.status ?? '') ? (
          <Button color="red" variant="light" onClick={() => cancel.mutate()} loading={cancel.isPending}>
            Cancel eval
          </Button>
        ) : null}
      </Group>
      <Group gap="xs">
        <Progress value={total ? (100 * done) / total : 0} w={240} aria-label="Progress" />
        <Text size="sm">
          {done} of {total || '?'} turns
        </Text>
      </Group>
      {ev.error ? (
        <Text size="sm" c="red">
          {ev.error.code}: {ev.error.message}
        </Text>
      ) : null}
      <ErrorAlert error={cancel.error} />
    </Stack>
  );
}

/** One eval: progress, totals and verdict, then every turn's answers side by side. */
export function EvalPage() {
  const { id = '' } = useParams();
  const ev = useEval(id);
  const live = EVAL_LIVE.has(ev.data?.status ?? 'queued');
  const results = useEvalResults(id, ev.data?.progress?.turns_done ?? 0, ev.data?.status);
  if (ev.error)
    return (
      <ErrorAlert
        error={ev.error}
        missing={{ what: 'eval', idField: 'id', back: { to: '/evals', label: 'Evals' } }}
      />
    );
  if (!ev.data) return <Loading what="Loading the eval" />;
  const variants = (ev.data.variants ?? []).map((v) => v.name ?? '');
  return (
    <Stack gap="md">
      <Anchor component={Link} to="/evals" size="sm">
        ← Evals
      </Anchor>
      <Header ev={ev.data} />
      <Totals totals={(ev.data.totals ?? []) as EvalTotals[]} />
      <Title order={4}>Answers</Title>
      <ErrorAlert error={results.error} />
      {results.data?.length ? (
        <Comparison results={results.data} variants={variants} />
      ) : results.isLoading ? (
        <Loading what="Loading the answers" />
      ) : (
        <Empty title={live ? 'No turn answered yet' : 'No answers'}>
          {live
            ? 'Answers appear here as each turn is replayed.'
            : 'This eval ended before any turn was replayed.'}
        </Empty>
      )}
    </Stack>
  );
}
