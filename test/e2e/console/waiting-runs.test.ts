/**
 * The waiting runs inbox and the agent's budget in a real browser against the
 * real stack: a run whose model call does not fit in its agent's budget is
 * listed with the budget's figures; Resume says why it still waits; raising
 * the budget in the agent's form (the card links to it) lets the run finish;
 * Resume lets another go on once its budget has room; Cancel run ends a
 * third; a conversation's budget is raised in its card; the playground says a turn waits for budget and leads to the inbox. The agent form saves a budget, the waits'
 * timeouts and the non-idempotent tools, and shows the API's messages on
 * their inputs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noBrowser, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { noTemporal } from '../../helpers/services.js';
import { consoleWorld, poll, type ConsoleWorld, type RunView } from './console-world.js';
import { describedBy, label, pick } from './form-helpers.js';

/** Less than any model call of the world's priced model needs. */
const TINY = { max_usd: 0.000001, period: 'day' };

describe.skipIf(noTemporal() || noBrowser())('console: waiting runs', () => {
  let stack: ConsoleStack;
  let world: ConsoleWorld;

  beforeAll(async () => {
    stack = await startConsoleStack();
    world = await consoleWorld(stack);
    // A budget needs to know a call's most: a model without an output limit fails the turn instead of waiting.
    const limited = await stack.api.request('PATCH', `/api/agent-server/models/${world.modelId}`, {
      max_output_tokens: 1_000,
    });
    expect(limited.status).toBe(200);
  });
  afterAll(async () => {
    await stack?.close();
  });

  const runStatus = async (runId: string) =>
    (await stack.api.request<RunView>('GET', `/api/agent-server/runs/${runId}`)).body.data;
  const until = (runId: string, status: string) =>
    poll(
      async () => ((await runStatus(runId)).status === status ? runStatus(runId) : undefined),
      `run ${status}`,
    );
  /**
   * The failed answers these pages provoke on purpose (a refused Resume's
   * 409 and a refused save's 400) as the browser logs them and as the
   * world records them; anything else is a problem.
   */
  const problems = () =>
    world
      .problems()
      .filter((p) => !/^40[09] /.test(p) && !/status of 40[09] \((Conflict|Bad Request)\)/.test(p));

  it("lists a run waiting for its agent's budget; Resume says it still does not fit; raising the budget in the agent's form lets it finish", async () => {
    const agent = await world.agent({ budget: TINY });
    stack.vendor.script({ reply: { text: 'Paid for at last' } });
    const run = await world.converse({ agent_id: agent.id, message: 'Hello budget' });
    expect(run.status).toBe('awaiting_budget');

    const page = await world.open('/approvals'); // the inbox's old address leads to it
    await page.waitForURL(/\/console\/waiting$/);
    const card = page.getByRole('article', { name: `Budget wait for run ${run.run_id}` });
    await card.waitFor();
    const text = await card.textContent();
    expect(text).toContain(agent.name);
    expect(text).toContain("The agent's budget, per day");
    expect(text).toContain('$0.00 of $0.0000010');
    // The side bar counts it with the other waiting runs.
    const nav = page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: /Waiting runs/ });
    await nav.getByLabel('1 waiting').waitFor();
    await stack.screenshot(page, 'waiting-budget');

    await card.getByRole('button', { name: 'Resume' }).click();
    const refused = card.getByRole('alert');
    await refused.waitFor();
    expect(await refused.textContent()).toContain('does not fit in the agent budget');
    expect((await runStatus(run.run_id)).status).toBe('awaiting_budget');

    await card.getByRole('link', { name: "Edit the agent's budget" }).click();
    const form = page.getByRole('dialog', { name: `Edit agent ${agent.name}` });
    await label(form, 'Budget (USD)').fill('100');
    await form.getByRole('button', { name: 'Save agent' }).click();
    await form.waitFor({ state: 'hidden' });

    const done = await until(run.run_id, 'completed');
    expect(done.output?.content).toBe('Paid for at last');
    await page.getByRole('link', { name: /Waiting runs/ }).click();
    await page.getByText('No run is waiting').waitFor();
    expect(problems()).toEqual([]);
  });

  it('Resume lets a run go on once its budget has room', async () => {
    const agent = await world.agent({ budget: TINY });
    stack.vendor.script({ reply: { text: 'Resumed by hand' } });
    const run = await world.converse({ agent_id: agent.id, message: 'Try again' });
    expect(run.status).toBe('awaiting_budget');
    const page = await world.open('/waiting');
    const card = page.getByRole('article', { name: `Budget wait for run ${run.run_id}` });
    await card.waitFor();

    // Raised by a direct write no one announces: only Resume wakes the run.
    await stack.api.server.deps
      .db('agents')
      .where({ id: agent.id })
      .update({ budget: JSON.stringify({ max_usd: 100, period: 'day' }) });
    await card.getByRole('button', { name: 'Resume' }).click();
    await card.waitFor({ state: 'detached' });
    expect((await until(run.run_id, 'completed')).output?.content).toBe('Resumed by hand');
    expect(problems()).toEqual([]);
  });

  it("raises a conversation's budget in its card, which lets the run finish", async () => {
    const agent = await world.agent();
    const conversation = await stack.api.request<{ id: string }>(
      'POST',
      `/api/agent-server/conversations?project_id=${world.projectId}`,
      { budget: { ...TINY, period: 'week', alert_at: 0.5 } },
    );
    expect(conversation.status).toBe(200);
    const conversationId = conversation.body.data.id;
    stack.vendor.script({ reply: { text: 'Within the new budget' } });
    const run = await world.converse({
      agent_id: agent.id,
      conversation_id: conversationId,
      message: 'More',
    });
    expect(run.status).toBe('awaiting_budget');

    const page = await world.open('/waiting');
    const card = page.getByRole('article', { name: `Budget wait for run ${run.run_id}` });
    await card.waitFor();
    expect(await card.textContent()).toContain("The conversation's budget, per week");
    await label(card, 'Conversation budget (USD)').fill('50');
    await card.getByRole('button', { name: 'Raise' }).click();
    await card.waitFor({ state: 'detached' });
    expect((await until(run.run_id, 'completed')).output?.content).toBe('Within the new budget');
    const raised = await stack.api.request<{ budget: unknown }>(
      'GET',
      `/api/agent-server/conversations/${conversationId}?project_id=${world.projectId}`,
    );
    // Only its most changed.
    expect(raised.body.data.budget).toMatchObject({ max_usd: 50, period: 'week', alert_at: 0.5 });
    expect(problems()).toEqual([]);
  });

  it('Cancel run ends a run waiting for budget', async () => {
    const agent = await world.agent({ budget: { ...TINY, period: 'total' } });
    const run = await world.converse({ agent_id: agent.id, message: 'Never mind' });
    expect(run.status).toBe('awaiting_budget');

    const page = await world.open('/waiting');
    const card = page.getByRole('article', { name: `Budget wait for run ${run.run_id}` });
    await card.waitFor();
    expect(await card.textContent()).toContain('never (a total budget has no next period)');
    await card.getByRole('button', { name: 'Cancel run' }).click();
    await card.waitFor({ state: 'detached' });
    expect((await runStatus(run.run_id)).status).toBe('cancelled');
    expect(problems()).toEqual([]);
  });

  it("the agent form saves a budget, the waits' timeouts and the non-idempotent tools, and shows the API's messages on them", async () => {
    const agent = await world.agent();
    const page = await world.open(`/config/agents?edit=${agent.id}`);
    const form = page.getByRole('dialog', { name: `Edit agent ${agent.name}` });
    await label(form, 'Budget (USD)').fill('2.5');
    await label(form, 'Budget (tokens)').fill('50000');
    await pick(page, label(form, 'Budget period'), 'per week');
    await label(form, 'Alert at (share)').fill('2');
    await label(form, 'Budget wait timeout (ms)').fill('600000');
    const tools = label(form, 'Non-idempotent tools');
    await tools.fill('payments__charge');
    await tools.press('Enter');
    await tools.press('Tab');
    await label(form, 'Decision timeout (ms)').fill('120000');

    // A share above 1 is refused by the API, which names the field: its message sits under the input.
    await form.getByRole('button', { name: 'Save agent' }).click();
    const alertAt = label(form, 'Alert at (share)');
    await expect.poll(() => alertAt.getAttribute('aria-invalid')).toBe('true');
    expect(await describedBy(alertAt)).toContain('alert_at');
    await alertAt.fill('0.5');
    await form.getByRole('button', { name: 'Save agent' }).click();
    await form.waitFor({ state: 'hidden' });

    const saved = await stack.api.request<Record<string, unknown>>(
      'GET',
      `/api/agent-server/agents/${agent.id}`,
    );
    expect(saved.body.data).toMatchObject({
      budget: { max_usd: 2.5, max_tokens: 50000, period: 'week', alert_at: 0.5 },
      budget_wait_timeout_ms: 600000,
      non_idempotent_tools: ['payments__charge'],
      decision_timeout_ms: 120000,
    });

    // Emptied, the budget goes: the agent has none of its own.
    await page.getByRole('button', { name: `Edit ${agent.name}` }).click();
    const again = page.getByRole('dialog', { name: `Edit agent ${agent.name}` });
    for (const field of ['Budget (USD)', 'Budget (tokens)', 'Alert at (share)'])
      await label(again, field).fill('');
    await again.getByRole('button', { name: 'Save agent' }).click();
    await again.waitFor({ state: 'hidden' });
    const cleared = await stack.api.request<Record<string, unknown>>(
      'GET',
      `/api/agent-server/agents/${agent.id}`,
    );
    expect(cleared.body.data).toMatchObject({ budget: null, budget_wait_timeout_ms: 600000 });
    expect(problems()).toEqual([]);
  });

  it('the playground shows a turn waiting for budget as such, with the way to the inbox', async () => {
    const agent = await world.agent({ budget: TINY });
    const page = await world.open(`/playground?agent=${agent.id}`);
    await page.getByRole('textbox', { name: 'Message' }).fill('Anything left?');
    await page.getByRole('button', { name: 'Send' }).click();
    const turn = page.getByRole('article', { name: 'Turn 1' });
    await turn.getByText('awaiting budget').waitFor();
    const notice = turn.getByRole('status').filter({ hasText: 'Waiting for budget' });
    await notice.waitFor();
    await notice.getByRole('link', { name: 'Decide in Waiting runs' }).click();
    await page
      .getByRole('article', { name: /^Budget wait for run / })
      .filter({ hasText: agent.name })
      .waitFor();
    expect(problems()).toEqual([]);
  });
});
