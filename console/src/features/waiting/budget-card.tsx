import { Alert, Anchor, Button, Group, Table, Text } from '@mantine/core';
import { Link } from 'react-router';
import { ApiError } from '../../api/client.js';
import type { Run, RunPause } from '../../api/types.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { fmtCost, fmtDate, fmtInt } from '../sessions/format.js';
import { RaiseConversationBudget } from './conversation-budget.js';
import { useBudgetDecision } from './queries.js';
import { WaitCard, headOfRun } from './wait-card.js';
import { useCan } from '../../app/auth.js';

type Details = NonNullable<RunPause['details']>;

const WHOSE: Record<string, string> = {
  agent: "the agent's",
  conversation: "the conversation's",
  key: "the project key's",
};

const PER: Record<string, string> = {
  day: 'per day',
  week: 'per week',
  month: 'per month',
  total: 'in total',
};

/** A link to the form where the agent's or the key's budget is raised (a conversation's is raised in the card). */
function EditBudgetLink({ d }: { d: Details }) {
  const id = encodeURIComponent(d.id ?? '');
  if (d.scope === 'agent')
    return (
      <Anchor component={Link} to={`/config/agents?edit=${id}`} size="sm">
        Edit the agent's budget
      </Anchor>
    );
  if (d.scope === 'key')
    return (
      <Anchor component={Link} to={`/config/virtual-keys?edit=${id}`} size="sm">
        Edit the key's budget
      </Anchor>
    );
  return null;
}

/** Spent of the most, in dollars and (when the budget counts them) tokens. */
function spentOfMax(d: Details): string {
  const usd = `${fmtCost(d.spent_usd)} of ${fmtCost(d.max_usd)}`;
  return d.max_tokens == null ? usd : `${usd} · ${fmtInt(d.spent_tokens)} of ${fmtInt(d.max_tokens)} tokens`;
}

function BudgetFigures({ d }: { d: Details }) {
  const whose = WHOSE[d.scope ?? ''] ?? 'a';
  const rows: Array<[string, string]> = [
    [
      'Budget',
      `${whose.charAt(0).toUpperCase()}${whose.slice(1)} budget, ${PER[d.period ?? ''] ?? d.period ?? ''}`,
    ],
    ['Spent', spentOfMax(d)],
    ...(d.reserved_usd ? [['Held by calls under way', fmtCost(d.reserved_usd)] as [string, string]] : []),
    ['The call needs', `${fmtCost(d.needed_usd)} · up to ${fmtInt(d.needed_tokens)} tokens`],
    ['Resets', d.resets_at ? fmtDate(d.resets_at) : 'never (a total budget has no next period)'],
  ];
  return (
    <Table variant="vertical" aria-label="Budget" withTableBorder layout="fixed" maw={640} mb="sm">
      <Table.Tbody>
        {rows.map(([k, v]) => (
          <Table.Tr key={k}>
            <Table.Th w={200}>{k}</Table.Th>
            <Table.Td>{v}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/** A refused resume says why in the API's words (the call still does not fit); anything else as any error. */
function DecisionError({ error }: { error: unknown }) {
  if (error instanceof ApiError && error.status === 409) {
    const reason = typeof error.details.reason === 'string' ? error.details.reason : error.message;
    return (
      <Alert color="orange" title="Still waiting: the call does not fit yet" role="alert" mt="sm">
        {reason}
      </Alert>
    );
  }
  return <ErrorAlert error={error} />;
}

/** A run whose next model call does not fit in a budget: which budget, what it needs, Resume or Cancel. */
export function BudgetCard({ run }: { run: Run }) {
  const head = headOfRun(run, 'cancelled');
  const decide = useBudgetDecision(head.runId);
  const d: Details = run.pause?.details ?? {};
  const operates = useCan()('operate');
  return (
    <WaitCard label={`Budget wait for run ${head.runId}`} reason="budget" colour="orange" head={head}>
      <Text size="sm" mb="xs">
        Its next model call does not fit in {WHOSE[d.scope ?? ''] ?? 'a'} budget. Raising the budget lets it
        go on by itself, as does the start of the budget's next period.
      </Text>
      <BudgetFigures d={d} />
      {operates && (
        <Group gap="xs">
          <Button
            size="xs"
            color="green"
            loading={decide.isPending && decide.variables === 'resume'}
            disabled={decide.isPending}
            onClick={() => decide.mutate('resume')}
          >
            Resume
          </Button>
          <Button
            size="xs"
            color="red"
            variant="light"
            loading={decide.isPending && decide.variables === 'cancel'}
            disabled={decide.isPending}
            onClick={() => decide.mutate('cancel')}
          >
            Cancel run
          </Button>
          <EditBudgetLink d={d} />
        </Group>
      )}
      {operates && d.scope === 'conversation' && <RaiseConversationBudget run={run} d={d} />}
      <DecisionError error={decide.error} />
    </WaitCard>
  );
}
