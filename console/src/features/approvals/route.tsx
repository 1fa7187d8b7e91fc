import { Anchor, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import { useProject } from '../../app/project.js';
import { Empty } from '../../components/empty.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { Loading } from '../../components/loading.js';
import { ApprovalCard } from './approval-card.js';
import { usePendingApprovals } from './queries.js';

/** The inbox: every tool call waiting for a decision across the project's sessions. */
export function Component() {
  const { project } = useProject();
  const q = usePendingApprovals(project?.id);
  return (
    <Stack gap="md">
      <Stack gap={2}>
        <Title order={3}>Approvals</Title>
        <Text size="sm" c="dimmed">
          Tool calls waiting for a decision in every session of this project, the most recently paused first.
        </Text>
      </Stack>
      <ErrorAlert error={q.error} />
      {!project ? (
        <Empty title="No project yet">
          Create a project first: approvals belong to a project's sessions.
        </Empty>
      ) : q.isLoading ? (
        <Loading what="Loading pending approvals" />
      ) : !q.data?.length ? (
        <Empty
          title="Nothing waits for approval"
          action={
            <Anchor component={Link} to="/config" size="sm">
              Configure an agent's tools
            </Anchor>
          }
        >
          When an agent calls a tool listed in its MCP server's tools_requiring_approval (or a sandbox command
          with require_approval), the turn pauses and the call appears here.
        </Empty>
      ) : (
        q.data.map((item) => <ApprovalCard key={item.run_id} item={item} />)
      )}
    </Stack>
  );
}
