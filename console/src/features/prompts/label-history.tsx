import { Badge, Table, Text } from '@mantine/core';
import type { LabelMove } from '../../api/types.js';
import { Empty } from '../../components/empty.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { Loading } from '../../components/loading.js';
import { useLabelHistory } from './queries.js';

function Move({ m }: { m: LabelMove }) {
  return m.from_version === null ? (
    <Text size="sm">first set, on v{m.to_version}</Text>
  ) : (
    <Text size="sm">
      v{m.from_version} → v{m.to_version}
    </Text>
  );
}

/** Who moved the prompt's labels, when, and from which version to which; newest first. */
export function LabelHistory({ projectId, name }: { projectId: string; name: string }) {
  const history = useLabelHistory(projectId, name);
  if (history.isLoading) return <Loading what="Loading the label history" />;
  if (history.error || !history.data) return <ErrorAlert error={history.error} />;
  if (history.data.length === 0)
    return (
      <Empty title="production has not been moved yet">
        Move production (above, or from a version) and the move shows here: who moved it, when, and from which
        version to which.
      </Empty>
    );
  return (
    <Table aria-label="Label history" striped withTableBorder>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>When</Table.Th>
          <Table.Th>Label</Table.Th>
          <Table.Th>Move</Table.Th>
          <Table.Th>By</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {history.data.map((m) => (
          <Table.Tr key={`${m.moved_at}-${m.to_version}`}>
            <Table.Td>{new Date(m.moved_at).toLocaleString()}</Table.Td>
            <Table.Td>
              <Badge color={m.label === 'production' ? 'green' : 'blue'} size="sm">
                {m.label}
              </Badge>
            </Table.Td>
            <Table.Td>
              <Move m={m} />
            </Table.Td>
            <Table.Td>{m.moved_by}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
