import { Button, Group, NumberInput } from '@mantine/core';
import { useState } from 'react';
import type { BudgetPeriod, Run, RunPause } from '../../api/types.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { fieldError, numberOrNull, unplacedError } from '../../components/field-errors.js';
import { useConversation } from '../sessions/queries.js';
import { useSaveConversationBudget } from './queries.js';

type Details = NonNullable<RunPause['details']>;

/**
 * Raises the conversation's budget in place (the console has no form of a
 * conversation's settings): its most in dollars, the rest of the budget kept
 * as the conversation has it. The API wakes the run once its call fits.
 */
export function RaiseConversationBudget({ run, d }: { run: Run; d: Details }) {
  const projectId = run.project_id ?? '';
  const conversationId = d.id ?? run.conversation_id ?? '';
  const current = useConversation(conversationId, projectId).data?.budget;
  const save = useSaveConversationBudget(projectId, conversationId);
  const [maxUsd, setMaxUsd] = useState<number | string>(d.max_usd ?? '');
  const submit = () =>
    save.mutate({
      // Sent as typed (null when empty): the API's message shows under the input.
      max_usd: numberOrNull(maxUsd) as number,
      max_tokens: current?.max_tokens ?? d.max_tokens ?? null,
      period: current?.period ?? (d.period as BudgetPeriod),
      alert_at: current?.alert_at ?? null,
    });
  return (
    <form
      noValidate
      aria-label="Raise the conversation's budget"
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <Group gap="xs" align="flex-end" mt="sm">
        <NumberInput
          size="xs"
          w={200}
          label="Conversation budget (USD)"
          clampBehavior="none"
          min={0}
          decimalScale={6}
          prefix="$"
          value={maxUsd}
          onChange={setMaxUsd}
          error={fieldError(save.error, 'budget.max_usd') ?? fieldError(save.error, 'budget')}
        />
        <Button size="xs" type="submit" variant="light" loading={save.isPending}>
          Raise
        </Button>
      </Group>
      <ErrorAlert error={unplacedError(save.error, ['budget'])} />
    </form>
  );
}
