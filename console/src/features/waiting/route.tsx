import { Anchor, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import { useProject } from '../../app/project.js';
import type { PendingApproval, Run } from '../../api/types.js';
import { Empty } from '../../components/empty.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { Loading } from '../../components/loading.js';
import { ApprovalCard } from './approval-card.js';
import { BudgetCard } from './budget-card.js';
import { DecisionCard } from './decision-card.js';
import { AuthorizationCard, InputCard } from './mcp-wait-cards.js';
import { useOtherWaits, usePendingApprovals } from './queries.js';

type Waiting =
  | { reason: 'approval'; id: string; since: number; item: PendingApproval }
  | { reason: PauseReason; id: string; since: number; run: Run };

type PauseReason = 'budget' | 'decision' | 'authorization' | 'input';

/** The reason a run listed by its status waits for. */
const REASON: Record<string, PauseReason> = {
  awaiting_budget: 'budget',
  awaiting_decision: 'decision',
  awaiting_authorization: 'authorization',
  awaiting_input: 'input',
};

const time = (iso: string | null | undefined) => (iso ? Date.parse(iso) : 0);

/** Both lists as one, the most recently paused first. */
function merged(approvals: PendingApproval[], others: Run[]): Waiting[] {
  const all: Waiting[] = [
    ...approvals.map((item) => ({
      reason: 'approval' as const,
      id: item.run_id ?? '',
      since: time(item.since),
      item,
    })),
    ...others.map((run) => ({
      reason: REASON[run.status ?? ''] ?? 'budget',
      id: run.run_id ?? '',
      since: time(run.pause?.since ?? run.created_at),
      run,
    })),
  ];
  return all.sort((a, b) => b.since - a.since);
}

function WaitingCard({ w }: { w: Waiting }) {
  if (w.reason === 'approval') return <ApprovalCard item={w.item} />;
  if (w.reason === 'budget') return <BudgetCard run={w.run} />;
  if (w.reason === 'authorization') return <AuthorizationCard run={w.run} />;
  if (w.reason === 'input') return <InputCard run={w.run} />;
  return <DecisionCard run={w.run} />;
}

/** The inbox: every run of the project that waits for someone, whatever it waits for, with its decisions. */
export function Component() {
  const { project } = useProject();
  const approvals = usePendingApprovals(project?.id);
  const others = useOtherWaits(project?.id);
  const list = merged(approvals.data ?? [], others.data ?? []);
  return (
    <Stack gap="md">
      <Stack gap={2}>
        <Title order={3}>Waiting runs</Title>
        <Text size="sm" c="dimmed">
          Runs of this project paused until someone decides: tool calls to approve, model calls that do not
          fit in a budget, tool calls whose outcome is unknown, MCP servers that need authorization or ask a
          question. The most recently paused first.
        </Text>
      </Stack>
      <ErrorAlert error={approvals.error} />
      <ErrorAlert error={others.error} />
      {!project ? (
        <Empty title="No project yet">
          Create a project first: waiting runs belong to a project's sessions.
        </Empty>
      ) : approvals.isLoading || others.isLoading ? (
        <Loading what="Loading waiting runs" />
      ) : list.length === 0 ? (
        <Empty
          title="No run is waiting"
          action={
            <Anchor component={Link} to="/config/agents" size="sm">
              Configure an agent's approvals and budget
            </Anchor>
          }
        >
          A turn pauses here when it calls a tool that needs approval (an MCP server's
          tools_requiring_approval, a sandbox with require_approval), when its next model call does not fit in
          the agent's, the conversation's or the project key's budget, or when a worker stopped during a call
          of one of the agent's non-idempotent tools, when an MCP server needs OAuth authorization, or when a
          server asks the user a question during a call.
        </Empty>
      ) : (
        list.map((w) => <WaitingCard key={`${w.reason}-${w.id}`} w={w} />)
      )}
    </Stack>
  );
}
