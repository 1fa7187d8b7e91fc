/**
 * Runs that wait for a person on an MCP server's behalf, in a real browser
 * against the real stack (Temporal, PostgreSQL, an SDK-built MCP server whose
 * tool asks the user a question mid-call, the scripted model): Waiting runs
 * shows the server's question as a form from its schema (default prefilled,
 * the API's message for a missing required field under its input), Submit
 * answers it and the run completes with the tool's answer holding what was
 * typed; the playground answers the same question inside the turn; Decline
 * tells the server no. The MCP servers page shows a server with OAuth
 * settings as unauthorized with Authorize, and its form keeps the client
 * secret redacted while other OAuth fields change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAskingMcpServer } from '../../fixtures/mcp-servers.js';
import { noBrowser, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { uniqueName } from '../../helpers/factories.js';
import { noTemporal } from '../../helpers/services.js';
import { consoleWorld, poll, type ConsoleWorld, type RunView } from './console-world.js';
import { describedBy, label } from './form-helpers.js';

type AskingServer = Awaited<ReturnType<typeof startAskingMcpServer>>;

interface Run extends RunView {
  pause: { reason: string; details: Record<string, unknown> } | null;
  tool_calls: Array<{ name: string; output?: string; is_error?: boolean }>;
}

describe.skipIf(noTemporal() || noBrowser())("console: runs waiting for an MCP server's question", () => {
  let stack: ConsoleStack;
  let world: ConsoleWorld;
  let mcp: AskingServer;

  beforeAll(async () => {
    [stack, mcp] = await Promise.all([startConsoleStack(), startAskingMcpServer()]);
    world = await consoleWorld(stack);
  });
  afterAll(async () => {
    await mcp?.stop();
    await stack?.close();
  });

  const run = async (runId: string) =>
    (await stack.api.request<Run>('GET', `/api/agent-server/runs/${runId}`)).body.data;
  const until = (runId: string, status: string) =>
    poll(async () => ((await run(runId)).status === status ? run(runId) : undefined), `run ${status}`);
  /** The 400 a form without its required field provokes on purpose, as the browser and the world log it. */
  const problems = () =>
    world.problems().filter((p) => !/^400 /.test(p) && !/status of 400 \(Bad Request\)/.test(p));

  /** An agent offered the asking server's tools whose model calls `tool` once, then says `reply`. */
  async function askingAgent(tool: string, reply: string) {
    const name = uniqueName('asking');
    const server = await stack.api.request<{ id: string }>(
      'POST',
      `/api/agent-server/mcp-servers?project_id=${world.projectId}`,
      { name, endpoint: mcp.url },
    );
    expect(server.status).toBe(200);
    stack.vendor.script(
      { reply: { tool_calls: [{ name: tool, arguments: {} }] } },
      { reply: { text: reply } },
    );
    return world.agent({ mcp_servers: [{ mcp_server_id: server.body.data.id }] });
  }

  it("answers the server's form in Waiting runs: the default prefilled, a missing required field named, the run completes with the answer", async () => {
    const agent = await askingAgent('book_seat', 'Your seat is booked');
    const waiting = (await world.converse({ agent_id: agent.id, message: 'Book me a seat' })) as Run;
    expect(waiting.status).toBe('awaiting_input');

    const page = await world.open('/waiting');
    const card = page.getByRole('article', { name: `Input for run ${waiting.run_id}` });
    await card.waitFor();
    expect(await card.getByTestId('input-message').textContent()).toBe('Which seat would you like?');
    expect(await card.textContent()).toContain(agent.name);
    // Counted in the side bar with the other waiting runs.
    const nav = page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: /Waiting runs/ });
    await nav.getByLabel('1 waiting').waitFor();

    const seat = label(card, 'seat');
    expect(await describedBy(seat)).toContain('Seat number, e.g. 12A');
    expect(await label(card, 'meal').inputValue()).toBe('vegetarian');

    // Without the required seat the API refuses, naming content.seat: its message sits under the input.
    await card.getByRole('button', { name: 'Submit' }).click();
    await expect.poll(() => seat.getAttribute('aria-invalid')).toBe('true');
    expect(await describedBy(seat)).toContain('seat');
    expect((await run(waiting.run_id)).status).toBe('awaiting_input');
    await stack.screenshot(page, 'waiting-input');

    await seat.fill('14C');
    await card.getByRole('button', { name: 'Submit' }).click();
    await card.waitFor({ state: 'detached' });
    const done = await until(waiting.run_id, 'completed');
    expect(done.output?.content).toBe('Your seat is booked');
    const answer = done.tool_calls.find((c) => c.name === 'book_seat');
    expect(answer?.is_error).toBe(false);
    expect(answer?.output).toContain('"seat":"14C"');
    expect(mcp.heard).toContainEqual({
      tool: 'book_seat',
      action: 'accept',
      content: { seat: '14C', meal: 'vegetarian' },
    });
    await page.getByText('No run is waiting').waitFor();
    expect(problems()).toEqual([]);
  });

  it('answers the question inside the playground turn, which shows the tool result with the answer', async () => {
    const agent = await askingAgent('book_seat', 'Booked from the playground');
    const page = await world.open(`/playground?agent=${agent.id}`);
    await page.getByRole('textbox', { name: 'Message' }).fill('A window seat please');
    await page.getByRole('button', { name: 'Send' }).click();
    const turn = page.getByRole('article', { name: 'Turn 1' });
    await turn.getByText('awaiting input').waitFor();
    const notice = turn.getByRole('status').filter({ hasText: 'Waiting for your answer' });
    await notice.waitFor();
    expect(await notice.textContent()).toContain('Which seat would you like?');
    await label(notice, 'seat').fill('2A');
    await notice.getByRole('button', { name: 'Submit' }).click();

    await turn.getByText('Booked from the playground').waitFor();
    await notice.waitFor({ state: 'detached' });
    const result = turn.getByRole('region', { name: 'Tool call book_seat' });
    expect(await result.textContent()).toContain('2A');
    expect(problems()).toEqual([]);
  });

  it('Decline tells the server the person would not answer; the run goes on', async () => {
    const agent = await askingAgent('book_seat', 'No seat then');
    const waiting = (await world.converse({ agent_id: agent.id, message: 'Maybe a seat' })) as Run;
    expect(waiting.status).toBe('awaiting_input');
    const page = await world.open('/waiting');
    const card = page.getByRole('article', { name: `Input for run ${waiting.run_id}` });
    await card.getByRole('button', { name: 'Decline' }).click();
    await card.waitFor({ state: 'detached' });
    const done = await until(waiting.run_id, 'completed');
    expect(done.tool_calls.find((c) => c.name === 'book_seat')?.output).toContain('"action":"decline"');
    expect(problems()).toEqual([]);
  });

  it('shows a server with OAuth settings as unauthorized with Authorize; its form keeps the secret redacted', async () => {
    const name = uniqueName('oauth');
    const created = await stack.api.request<{ id: string }>(
      'POST',
      `/api/agent-server/mcp-servers?project_id=${world.projectId}`,
      {
        name,
        endpoint: mcp.url,
        oauth: { client_id: 'console-client', client_secret: 'console-secret', scopes: ['read'] },
      },
    );
    expect(created.status).toBe(200);
    const page = await world.open('/config/mcp-servers');
    const row = page.getByRole('row', { name: new RegExp(name) });
    await row.getByText('unauthorized').waitFor();
    await row.getByRole('button', { name: `Authorize ${name}` }).waitFor();
    expect(await row.getByRole('button', { name: `Forget authorization of ${name}` }).count()).toBe(0);

    await page.getByRole('button', { name: `Edit ${name}` }).click();
    const form = page.getByRole('dialog', { name: `Edit MCP server ${name}` });
    expect(await label(form, 'Client id').inputValue()).toBe('console-client');
    expect(await label(form, 'Client secret').inputValue()).toBe('[redacted]');
    expect(await label(form, 'Scopes').inputValue()).toBe('read');
    await label(form, 'Scopes').fill('read, write');
    await label(form, 'Per-user tokens').check();
    await form.getByRole('button', { name: 'Save MCP server' }).click();
    await form.waitFor({ state: 'hidden' });

    const saved = await stack.api.request<Record<string, unknown>>(
      'GET',
      `/api/agent-server/mcp-servers/${created.body.data.id}`,
    );
    expect(saved.body.data).toMatchObject({
      oauth: { client_id: 'console-client', client_secret: '[redacted]', scopes: ['read', 'write'] },
      per_user_tokens: true,
      authorization: { status: 'unauthorized' },
    });
    expect(problems()).toEqual([]);
  });
});
