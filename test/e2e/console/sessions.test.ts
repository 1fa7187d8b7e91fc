/**
 * Sessions and the approvals inbox in a real browser against the real stack:
 * a conversation made through converse (the scripted vendor answers) is
 * listed, its page shows the transcript and the run with its figures and
 * links; a tool call that needs approval appears in the inbox and approving
 * it lets the turn finish.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEverythingServer, type RunningMcp } from '../../fixtures/mcp-servers.js';
import { noBrowser, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { uniqueName } from '../../helpers/factories.js';
import { noTemporal } from '../../helpers/services.js';
import { consoleWorld, poll, type ConsoleWorld, type RunView } from './console-world.js';

describe.skipIf(noTemporal() || noBrowser())('console: sessions and approvals', () => {
  let stack: ConsoleStack;
  let world: ConsoleWorld;
  let everything: RunningMcp;

  beforeAll(async () => {
    [stack, everything] = await Promise.all([startConsoleStack(), startEverythingServer('streamableHttp')]);
    world = await consoleWorld(stack);
  });
  afterAll(async () => {
    await everything?.stop();
    await stack?.close();
  });

  it('lists the conversation; its page shows the transcript, the run with status, tokens and cost, and links to the trace and workflow', async () => {
    const agent = await world.agent();
    stack.vendor.script({ reply: { text: 'Hello from the scripted model', usage: { input: 7, output: 3 } } });
    const run = await world.converse({ agent_id: agent.id, message: 'Hi console', namespace: 'support' });
    expect(run.status).toBe('completed');
    // A summary the summarizer wrote (as a long conversation would) shows after the last message it stands for.
    const db = stack.api.server.deps.db;
    const answer = await db('messages')
      .where({ run_id: run.run_id, role: 'assistant' })
      .first<{ thread_id: string; seq: string }>('thread_id', 'seq');
    await db('thread_summaries').insert({
      thread_id: answer.thread_id,
      through_seq: answer.seq,
      content: 'The user greeted the console.',
    });

    const page = await world.open('/sessions');
    const row = page.getByRole('row').filter({ hasText: run.conversation_id });
    await row.waitFor();
    expect(await row.textContent()).toContain('support');
    // The latest turn's agent and status, the turns, and what they cost (7 × $2/M + 3 × $8/M).
    const cells = await row.getByRole('cell').allInnerTexts();
    expect(cells.slice(1, 5)).toEqual([agent.name, 'COMPLETED', '1', '$0.000038']);

    // Filtering by another namespace leaves the empty state; its own brings it back.
    await page.getByLabel('Namespace').fill('nope');
    await page.getByText('No conversation matches these filters').waitFor();
    await page.getByLabel('Namespace').fill('support');
    await row.waitFor();
    await stack.screenshot(page, 'sessions');

    await row.getByRole('link', { name: run.conversation_id }).click();
    await page.waitForURL(new RegExp(`/console/sessions/${run.conversation_id}$`));
    const runs = page.getByRole('table', { name: 'Runs' });
    const runRow = runs.locator(`tr[data-run-id="${run.run_id}"]`);
    await runRow.waitFor();
    const text = (await runRow.textContent()) ?? '';
    expect(text).toContain('completed');
    expect(text).toContain(agent.name);
    expect(text).toContain('7 / 3');
    expect(text).toContain('gpt-test');
    expect(text).toMatch(/\$0\.0000\d/); // 7 × $2/M + 3 × $8/M
    expect(await runRow.getByRole('link', { name: 'Workflow' }).getAttribute('href')).toContain(
      encodeURIComponent(`session/${agent.id}/${run.conversation_id}`),
    );
    expect(await runRow.getByRole('link', { name: 'Trace' }).getAttribute('href')).toBe(
      `/console/traces/${run.trace_id}`,
    );
    // The transcript: the user's message and the answer.
    await page.getByLabel('user message').filter({ hasText: 'Hi console' }).waitFor();
    await page.getByLabel('assistant message').filter({ hasText: 'Hello from the scripted model' }).waitFor();
    await page.getByLabel('summary').filter({ hasText: 'The user greeted the console.' }).waitFor();
    expect(await page.getByRole('link', { name: /workflow in Temporal UI/ }).count()).toBe(1);
    await runRow.getByRole('button', { name: 'Details' }).click();
    await page.getByText(`Run ${run.run_id}`).waitFor();
    await stack.screenshot(page, 'sessions-conversation');
    expect(world.problems()).toEqual([]);
  });

  it('continues a past conversation in the playground: its transcript, then the next turn in the same conversation', async () => {
    const agent = await world.agent();
    stack.vendor.reset();
    stack.vendor.script(
      { reply: { text: 'First answer.' } },
      { reply: { text: 'Second answer, in the playground.' } },
    );
    const run = await world.converse({
      agent_id: agent.id,
      message: 'First question',
      overrides: { parameters: { temperature: 0.2 } },
    });
    expect(run.status).toBe('completed');

    const page = await world.open(`/sessions/${run.conversation_id}`);
    // The run's details say what it was tried with.
    await page.locator(`tr[data-run-id="${run.run_id}"]`).getByRole('button', { name: 'Details' }).click();
    await page.getByText('Run with changes (overrides)').waitFor();
    await page.getByText('{"temperature":0.2}').waitFor();
    await page.getByRole('link', { name: 'Continue in playground' }).click();
    await page.waitForURL(/\/console\/playground\?/);
    const turn = (n: number) => page.getByRole('article', { name: `Turn ${n}` });
    await turn(1).getByTestId('user-text').getByText('First question').waitFor();
    await turn(1).getByTestId('assistant-text').getByText('First answer.').waitFor();
    await expect.poll(() => page.getByRole('combobox', { name: 'Agent' }).inputValue()).toBe(agent.name);

    await page.getByRole('textbox', { name: 'Message' }).fill('Second question');
    await page.getByRole('button', { name: 'Send' }).click();
    await turn(2).getByText('completed', { exact: true }).waitFor();
    expect(await turn(2).getByTestId('assistant-text').innerText()).toBe('Second answer, in the playground.');
    await stack.screenshot(page, 'sessions-continued');

    // The same conversation (and thread) took the turn; the model saw the whole history.
    const runs = await stack.api.request<RunView[]>(
      'GET',
      `/api/agent-server/conversations/${run.conversation_id}/runs?project_id=${world.projectId}`,
    );
    expect(runs.body.data.map((r) => r.status)).toEqual(['completed', 'completed']);
    expect(JSON.stringify(stack.vendor.received.at(-1)!.body.messages)).toContain('First answer.');
    expect(world.problems()).toEqual([]);
  });

  it('the approvals inbox lists a paused call; Approve removes it and the run completes', async () => {
    const srv = await stack.api.request<{ id: string }>(
      'POST',
      `/api/agent-server/mcp-servers?project_id=${world.projectId}`,
      { name: uniqueName('mcp'), endpoint: everything.url },
    );
    expect(srv.status).toBe(200);
    const agent = await world.agent({
      mcp_servers: [
        { mcp_server_id: srv.body.data.id, tool_filters: ['echo'], tools_requiring_approval: ['echo'] },
      ],
    });
    stack.vendor.script(
      { reply: { tool_calls: [{ name: 'echo', arguments: { message: 'approved words' } }] } },
      { reply: { text: 'echoed' } },
    );
    const run = await world.converse({ agent_id: agent.id, message: 'echo please' });
    expect(run.status).toBe('awaiting_approval');

    const page = await world.open('/waiting');
    const card = page.getByRole('article', { name: `Approval for run ${run.run_id}` });
    await card.waitFor();
    expect(await card.textContent()).toContain('approved words');
    expect(await card.textContent()).toContain(agent.name);
    await stack.screenshot(page, 'approvals');

    await card.getByRole('button', { name: 'Approve echo' }).click();
    await card.waitFor({ state: 'detached' });
    const done = await poll(async () => {
      const r = await stack.api.request<RunView>('GET', `/api/agent-server/runs/${run.run_id}`);
      return r.body.data.status === 'completed' ? r.body.data : undefined;
    }, 'the approved run to complete');
    expect(done.output?.content).toBe('echoed');
    await page.getByText('No run is waiting').waitFor();

    // The run's page shows the approved tool call and its result.
    await page.goto(`${stack.api.url}/console/sessions/${run.conversation_id}`);
    const runRow = page.locator(`tr[data-run-id="${run.run_id}"]`);
    await runRow.getByText('completed').waitFor();
    await runRow.getByRole('button', { name: 'Details' }).click();
    const calls = page.getByRole('table', { name: 'Tool calls' });
    await calls.waitFor();
    expect(await calls.textContent()).toContain('approved words');
    expect(world.problems()).toEqual([]);
  });

  it("a waiting run's details cancel it and roll it back: the transcript loses the turn, the run says so", async () => {
    const srv = await stack.api.request<{ id: string }>(
      'POST',
      `/api/agent-server/mcp-servers?project_id=${world.projectId}`,
      { name: uniqueName('mcp'), endpoint: everything.url },
    );
    const agent = await world.agent({
      mcp_servers: [
        { mcp_server_id: srv.body.data.id, tool_filters: ['echo'], tools_requiring_approval: ['echo'] },
      ],
    });
    stack.vendor.reset();
    stack.vendor.script({ reply: { tool_calls: [{ name: 'echo', arguments: { message: 'regret' } }] } });
    const run = await world.converse({ agent_id: agent.id, message: 'Something to take back' });
    expect(run.status).toBe('awaiting_approval');

    const page = await world.open(`/sessions/${run.conversation_id}`);
    await page.getByText('Something to take back').first().waitFor();
    const runRow = page.locator(`tr[data-run-id="${run.run_id}"]`);
    await runRow.getByRole('button', { name: 'Details' }).click();
    await page.getByRole('button', { name: 'Cancel and roll back' }).click();
    await page.getByText('Rolled back', { exact: true }).waitFor();
    await runRow.getByText('cancelled').waitFor();
    await page.getByText('Something to take back').waitFor({ state: 'detached' });
    expect(await page.getByRole('button', { name: 'Cancel and roll back' }).count()).toBe(0);
    const after = await stack.api.request<RunView & { rolled_back: boolean }>(
      'GET',
      `/api/agent-server/runs/${run.run_id}`,
    );
    expect(after.body.data).toMatchObject({ status: 'cancelled', rolled_back: true });
    expect(world.problems()).toEqual([]);
  });
});
