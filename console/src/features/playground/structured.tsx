import { Badge, Code, Group, Paper, Stack, Table, Text } from '@mantine/core';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const cell = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/**
 * The final answer as the agent's schema parsed it. The API validates it
 * (run output `structured` is only set when the answer matches the schema);
 * an answer that never matched says so.
 */
export function StructuredOutput({ value, schemaName }: { value: unknown; schemaName: string }) {
  if (value === undefined)
    return (
      <Badge color="red" variant="light">
        The answer did not match schema {schemaName}
      </Badge>
    );
  return (
    <Paper withBorder p="xs" radius="sm" component="section" aria-label="Structured output">
      <Stack gap={6}>
        <Group gap="xs">
          <Text size="sm" fw={600}>
            Structured output
          </Text>
          <Badge color="green" variant="light">
            valid against {schemaName}
          </Badge>
        </Group>
        {isRecord(value) ? (
          <Table withTableBorder withColumnBorders fz="sm">
            <Table.Tbody>
              {Object.entries(value).map(([k, v]) => (
                <Table.Tr key={k}>
                  <Table.Th w="30%">{k}</Table.Th>
                  <Table.Td style={{ whiteSpace: 'pre-wrap' }}>{cell(v)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        ) : (
          <Code block>{JSON.stringify(value, null, 2)}</Code>
        )}
      </Stack>
    </Paper>
  );
}
