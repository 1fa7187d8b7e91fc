import { Badge, Button, Checkbox, Code, Group, Stack, Table, Text, Textarea } from '@mantine/core';
import { useState } from 'react';
import type { Run } from '../../api/types.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { fieldErrorUnder, unplacedError } from '../../components/field-errors.js';
import { prettyJson } from '../sessions/format.js';
import { useToolDecision } from './queries.js';
import { WaitCard, headOfRun } from './wait-card.js';
import { useCan } from '../../app/auth.js';

type Decide = ReturnType<typeof useToolDecision>;

/** The result a person supplies for the call: what the model reads as the tool's answer, and whether it failed. */
function SupplyForm({ decide, onCancel }: { decide: Decide; onCancel: () => void }) {
  const [output, setOutput] = useState('');
  const [isError, setIsError] = useState(false);
  return (
    <form
      noValidate
      aria-label="Supply the result"
      onSubmit={(e) => {
        e.preventDefault();
        decide.mutate({ action: 'supply', result: { output, is_error: isError } });
      }}
    >
      <Stack gap="xs" mt="sm" maw={640}>
        <Textarea
          label="Output"
          description="What the model reads as the tool's answer"
          autosize
          minRows={2}
          value={output}
          onChange={(e) => setOutput(e.currentTarget.value)}
          error={fieldErrorUnder(decide.error, 'result.output')}
          data-autofocus
        />
        <Checkbox
          label="The call failed (the output is an error)"
          checked={isError}
          onChange={(e) => setIsError(e.currentTarget.checked)}
          error={fieldErrorUnder(decide.error, 'result.is_error')}
        />
        <Group gap="xs">
          <Button size="xs" type="submit" loading={decide.isPending}>
            Send result
          </Button>
          <Button size="xs" variant="default" onClick={onCancel}>
            Cancel
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

/**
 * A run waiting for a decision on a call of a non-idempotent tool whose
 * worker stopped mid-call: whether it took effect is unknown, so a person
 * says whether to call it again or what its result was.
 */
export function DecisionCard({ run }: { run: Run }) {
  const head = headOfRun(run, 'the call fails');
  const decide = useToolDecision(head.runId);
  const [supplying, setSupplying] = useState(false);
  const operates = useCan()('operate');
  const d = run.pause?.details ?? {};
  const server = typeof d.server === 'string' ? d.server : undefined;
  const step = typeof d.step === 'number' ? d.step : undefined;
  return (
    <WaitCard label={`Decision for run ${head.runId}`} reason="decision" colour="grape" head={head}>
      <Text size="sm" mb="xs">
        The worker stopped while this call was under way, and the tool is marked non-idempotent: whether the
        call took effect is unknown. Call it again (its effect may happen twice), or supply the result the
        model gets.
      </Text>
      <Table aria-label="Call with an unknown outcome" mb="sm">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Tool</Table.Th>
            <Table.Th>Arguments</Table.Th>
            <Table.Th w={80}>Step</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          <Table.Tr>
            <Table.Td>
              <Group gap={6}>
                <Code>{d.name ?? d.call_id}</Code>
                {server && (
                  <Badge size="xs" variant="light">
                    {server}
                  </Badge>
                )}
              </Group>
            </Table.Td>
            <Table.Td>
              <Code block>{prettyJson(d.arguments ?? '')}</Code>
            </Table.Td>
            <Table.Td>{step ?? '—'}</Table.Td>
          </Table.Tr>
        </Table.Tbody>
      </Table>
      {operates && (
        <Group gap="xs">
          <Button
            size="xs"
            loading={decide.isPending && decide.variables?.action === 'retry'}
            disabled={decide.isPending}
            onClick={() => decide.mutate({ action: 'retry' })}
          >
            Call again
          </Button>
          <Button size="xs" variant="light" disabled={supplying} onClick={() => setSupplying(true)}>
            Supply result
          </Button>
        </Group>
      )}
      {supplying && <SupplyForm decide={decide} onCancel={() => setSupplying(false)} />}
      <ErrorAlert error={unplacedError(decide.error, supplying ? ['result'] : [])} />
    </WaitCard>
  );
}
