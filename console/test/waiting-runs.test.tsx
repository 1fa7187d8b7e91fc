/**
 * The waiting runs inbox's cards for runs that wait for something other than
 * approval: a decision card shows the call whose outcome is unknown and sends
 * "call again" or the result a person supplies (the API's message for the
 * result on its input); a budget card shows which budget and what the call
 * needs, and says why a refused Resume still waits.
 */
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { Run } from '../src/api/types.js';
import { BudgetCard } from '../src/features/waiting/budget-card.js';
import { DecisionCard } from '../src/features/waiting/decision-card.js';
import { describedBy, input } from './dom.js';
import { answer, failure, invalid, ok, requests } from './fake-api.js';
import { renderPage } from './render.js';

const RUN = {
  run_id: 'run-1',
  agent_id: 'agent-1',
  agent_name: 'payments',
  conversation_id: 'conv-1',
  trace_id: null,
  temporal_ui_url: null,
  created_at: '2026-01-01T00:00:00Z',
};

const DECIDING = {
  ...RUN,
  status: 'awaiting_decision',
  pause: {
    reason: 'decision',
    since: '2026-01-01T00:00:05Z',
    timeout_at: null,
    details: {
      call_id: 'call-1',
      step: 2,
      name: 'billing__charge',
      arguments: '{"amount":42}',
      server: 'billing',
      tool: 'charge',
    },
  },
} as unknown as Run;

const BUDGETED = {
  ...RUN,
  status: 'awaiting_budget',
  pause: {
    reason: 'budget',
    since: '2026-01-01T00:00:05Z',
    timeout_at: null,
    details: {
      scope: 'key',
      id: 'key-1',
      period: 'month',
      max_usd: 5,
      max_tokens: null,
      spent_usd: 4.99,
      spent_tokens: 1000,
      reserved_usd: 0,
      needed_usd: 0.02,
      needed_tokens: 1200,
      resets_at: '2026-02-01T00:00:00Z',
    },
  },
} as unknown as Run;

const decisions = () =>
  requests.filter((r) => r.method === 'POST' && r.path === '/api/agent-server/runs/run-1/decision');

describe('a decision card', () => {
  it('shows the call; Call again sends retry, Supply result sends the output and whether it failed', async () => {
    answer('POST /api/agent-server/runs/run-1/decision', ok({ ...RUN, status: 'running', pause: null }));
    const user = userEvent.setup();
    renderPage(<DecisionCard run={DECIDING} />);
    const card = screen.getByRole('article', { name: 'Decision for run run-1' });
    expect(card.textContent).toContain('billing__charge');
    expect(card.textContent).toContain('"amount": 42');

    await user.click(within(card).getByRole('button', { name: 'Call again' }));
    await waitFor(() => expect(decisions()).toHaveLength(1));
    expect(decisions()[0]!.body).toEqual({ action: 'retry' });

    await user.click(within(card).getByRole('button', { name: 'Supply result' }));
    await user.type(input('Output'), 'charged once');
    await user.click(screen.getByRole('checkbox', { name: /The call failed/ }));
    await user.click(screen.getByRole('button', { name: 'Send result' }));
    await waitFor(() => expect(decisions()).toHaveLength(2));
    expect(decisions()[1]!.body).toEqual({
      action: 'supply',
      result: { output: 'charged once', is_error: true },
    });
  });

  it("shows the API's message for the result under its input", async () => {
    answer(
      'POST /api/agent-server/runs/run-1/decision',
      invalid({ 'result.output': '"result.output" length must be less than or equal to 1000000' }),
    );
    const user = userEvent.setup();
    renderPage(<DecisionCard run={DECIDING} />);
    await user.click(screen.getByRole('button', { name: 'Supply result' }));
    await user.click(screen.getByRole('button', { name: 'Send result' }));
    await waitFor(() => expect(input('Output').getAttribute('aria-invalid')).toBe('true'));
    expect(describedBy(input('Output'))).toContain('result.output');
  });
});

describe('a budget card', () => {
  it("shows the budget's figures, links to the key's form, and says why a refused Resume still waits", async () => {
    answer(
      'POST /api/agent-server/runs/run-1/budget',
      failure(409, 'Conflict', {
        status: 'awaiting_budget',
        reason:
          'the waiting call still does not fit in the key budget: raise it, or wait for its next period',
      }),
    );
    const user = userEvent.setup();
    renderPage(<BudgetCard run={BUDGETED} />);
    const card = screen.getByRole('article', { name: 'Budget wait for run run-1' });
    const figures = within(card).getByRole('table', { name: 'Budget' });
    expect(figures.textContent).toContain("The project key's budget, per month");
    expect(figures.textContent).toContain('$4.99 of $5.00');
    expect(figures.textContent).toContain('$0.0200 · up to 1,200 tokens');
    expect(within(card).getByRole('link', { name: "Edit the key's budget" }).getAttribute('href')).toBe(
      '/config/virtual-keys?edit=key-1',
    );

    await user.click(within(card).getByRole('button', { name: 'Resume' }));
    const alert = await within(card).findByRole('alert');
    expect(alert.textContent).toContain('still does not fit in the key budget');
    expect(requests.at(-1)?.body).toEqual({ action: 'resume' });
  });
});
