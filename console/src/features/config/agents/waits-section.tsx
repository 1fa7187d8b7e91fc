import { Group, NumberInput, Select, Stack, TagsInput } from '@mantine/core';
import type { BudgetPeriod } from '../../../api/types.js';
import { fieldError } from '../../../components/field-errors.js';
import { useMcpServers } from '../mcp/queries.js';
import type { AgentDraft } from './draft.js';
import type { SectionProps } from './sections.js';

const PERIODS: Array<{ value: BudgetPeriod; label: string }> = [
  { value: 'day', label: 'per day' },
  { value: 'week', label: 'per week' },
  { value: 'month', label: 'per month' },
  { value: 'total', label: 'in total' },
];

/** The most a wait may last: the API's bound (24 days, the column's integer). */
const MAX_WAIT_MS = 2_073_600_000;

/** What the agent's turns may spend, and how long a run waits for budget before it is cancelled. */
export function BudgetSection({ f, err }: SectionProps) {
  const b = f.values.budget;
  const setB = (patch: Partial<AgentDraft['budget']>) => f.set({ budget: { ...b, ...patch } });
  const on = b.max_usd !== '' || b.max_tokens !== '' || b.alert_at !== '';
  return (
    <Stack>
      <Group grow align="flex-start">
        <NumberInput
          clampBehavior="none"
          label="Budget (USD)"
          description="Empty: no budget of the agent's own (the project key's still counts)"
          placeholder="no budget"
          min={0}
          decimalScale={4}
          prefix="$"
          value={b.max_usd}
          onChange={(v) => setB({ max_usd: v })}
          error={fieldError(err, 'budget.max_usd') ?? fieldError(err, 'budget')}
        />
        <NumberInput
          clampBehavior="none"
          label="Budget (tokens)"
          description="Optional: at most this many tokens too"
          placeholder="no token limit"
          min={1}
          allowDecimal={false}
          value={b.max_tokens}
          onChange={(v) => setB({ max_tokens: v })}
          error={fieldError(err, 'budget.max_tokens')}
        />
      </Group>
      <Group grow align="flex-start">
        <Select
          label="Budget period"
          data={PERIODS}
          allowDeselect={false}
          value={b.period}
          onChange={(v) => v && setB({ period: v })}
          error={fieldError(err, 'budget.period')}
        />
        <NumberInput
          clampBehavior="none"
          label="Alert at (share)"
          description="budget.threshold fires once a period past this share; empty: 0.8"
          placeholder="0.8"
          min={0}
          max={1}
          step={0.05}
          decimalScale={2}
          disabled={!on}
          value={b.alert_at}
          onChange={(v) => setB({ alert_at: v })}
          error={fieldError(err, 'budget.alert_at')}
        />
      </Group>
      <NumberInput
        clampBehavior="none"
        label="Budget wait timeout (ms)"
        description="A run waiting for budget this long is cancelled; empty: it waits until the budget allows"
        placeholder="waits"
        min={1000}
        max={MAX_WAIT_MS}
        {...f.value('budget_wait_timeout_ms')}
      />
    </Stack>
  );
}

/**
 * The tools whose call is not repeated blindly after a worker stopped
 * mid-call, and how long the run waits for someone to decide. The agent's
 * MCP tools are offered as the model sees them (`server__tool`).
 */
export function DecisionSection({ projectId, f }: SectionProps) {
  const servers = useMcpServers(projectId);
  const serverName = (id: string | null) => servers.data?.find((s) => s.id === id)?.name;
  const offered = f.values.mcp_servers.flatMap((m) => {
    const name = serverName(m.mcp_server_id);
    return name ? m.tool_filters.map((t) => `${name}__${t}`) : [];
  });
  return (
    <Stack>
      <TagsInput
        label="Non-idempotent tools"
        description="MCP tools as the model sees them (server__tool), Enter after each: when a worker stops during such a call, the run waits for someone to call it again or supply its result"
        data={[...new Set(offered)]}
        clearable
        {...f.value('non_idempotent_tools')}
      />
      <NumberInput
        clampBehavior="none"
        label="Decision timeout (ms)"
        description="An undecided call fails after this long; empty: it waits"
        placeholder="waits"
        min={1000}
        max={MAX_WAIT_MS}
        {...f.value('decision_timeout_ms')}
      />
    </Stack>
  );
}

/**
 * How long a tool call waits for a person on an MCP server's behalf: to
 * answer the server's question (elicitation), or to authorize the server.
 */
export function McpWaitsSection({ f }: SectionProps) {
  return (
    <Group grow align="flex-start">
      <NumberInput
        clampBehavior="none"
        label="Input timeout (ms)"
        description="A question an MCP server asks during a call is declined after this long; empty: 24 hours"
        placeholder="24 hours"
        min={1000}
        max={MAX_WAIT_MS}
        {...f.value('input_timeout_ms')}
      />
      <NumberInput
        clampBehavior="none"
        label="Authorization timeout (ms)"
        description="A call waiting for an MCP server's authorization fails after this long; empty: 24 hours"
        placeholder="24 hours"
        min={1000}
        max={MAX_WAIT_MS}
        {...f.value('authorization_timeout_ms')}
      />
    </Group>
  );
}
