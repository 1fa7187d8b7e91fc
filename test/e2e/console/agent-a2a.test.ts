/**
 * Remote A2A agents in the console, in a real browser against a real stack
 * and real remote A2A agents (the SDK-built fixture). The agent form's A2A
 * agents section: a registered remote agent picked, its skills read from its
 * card as the filters' suggestions, saved and shown again after a reload; a
 * remote agent deleted while the form still offers it comes back as the
 * API's 400 under its picker. The A2A agents tab: OAuth client settings
 * given to a remote whose card offers client credentials, shown
 * unauthorized, Authorize getting a token without anyone signing in, Forget
 * authorization, and the secret kept redacted in the form.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startA2aTestAgent, type A2aTestAgent } from '../../fixtures/a2a-agents.js';
import { noBrowser, SCREENSHOTS, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { uniqueName } from '../../helpers/factories.js';
import { noTemporal } from '../../helpers/services.js';
import { consoleWorld, type ConsoleWorld } from './console-world.js';
import { describedBy, label, pick } from './form-helpers.js';

const TOKEN = 'console-a2a-token';

/** The smallest token endpoint: any client-credentials request gets TOKEN; `requests` counts them. */
async function startTokenEndpoint() {
  let requests = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests += 1;
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ access_token: TOKEN, token_type: 'Bearer', expires_in: 3600, scope: 'read' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`,
    requests: () => requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface AgentView {
  a2a_agents: Array<{ a2a_agent_id: string; tool_filters: string[]; tools_requiring_approval: string[] }>;
}

describe.skipIf(noTemporal() || noBrowser())('console: remote A2A agents', () => {
  let stack: ConsoleStack;
  let world: ConsoleWorld;
  let remote: A2aTestAgent;
  let tokens: Awaited<ReturnType<typeof startTokenEndpoint>>;
  /** A remote whose card offers OAuth 2 client credentials at `tokens`, admitting only TOKEN. */
  let guarded: A2aTestAgent;

  beforeAll(async () => {
    [stack, remote, tokens] = await Promise.all([
      startConsoleStack(),
      startA2aTestAgent(),
      startTokenEndpoint(),
    ]);
    guarded = await startA2aTestAgent({
      guard: {
        securitySchemes: () => ({
          machine: {
            oauth2SecurityScheme: {
              flows: { clientCredentials: { tokenUrl: tokens.url, scopes: { read: 'read' } } },
            },
          },
        }),
        admits: (authorization) => Promise.resolve(authorization === `Bearer ${TOKEN}`),
      },
    });
    world = await consoleWorld(stack);
  }, 180_000);
  afterAll(async () => {
    await Promise.all([stack?.close(), remote?.close(), guarded?.close(), tokens?.close()]);
  });

  const register = async () => {
    const name = uniqueName('remote');
    const res = await stack.api.request<{ id: string }>(
      'POST',
      `/api/agent-server/a2a-agents?project_id=${world.projectId}`,
      { name, card_url: remote.cardUrl },
    );
    if (res.status !== 200) throw new Error(`A2A agent create failed: ${res.text}`);
    return { id: res.body.data.id, name };
  };
  const getAgent = async (id: string) =>
    (await stack.api.request<AgentView>('GET', `/api/agent-server/agents/${id}`)).body.data;

  it('picks a remote agent with a skill filter and a skill needing approval, saves, and shows them after a reload', async () => {
    const billing = await register();
    const agent = await world.agent();

    const page = await world.open(`/config/agents?edit=${agent.id}`);
    let dialog = page.getByRole('dialog', { name: `Edit agent ${agent.name}` });
    await dialog.getByText('No A2A agent: the agent calls no remote agent.').waitFor();
    await dialog.getByRole('button', { name: 'Add A2A agent' }).click();
    await pick(page, label(dialog, 'A2A agent 1'), billing.name);
    await dialog.getByRole('button', { name: 'Load its skills' }).click();
    // The card's skills are offered as suggestions.
    const filter = label(dialog, 'Skill filter');
    await filter.click();
    await page.getByRole('option', { name: 'answer', exact: true }).click();
    await filter.press('Tab');
    const approval = label(dialog, 'Skills requiring approval');
    await approval.fill('ask');
    await approval.press('Enter');
    await approval.press('Tab'); // closes the suggestions
    await dialog.getByRole('group', { name: 'A2A agents' }).screenshot({
      path: path.join(SCREENSHOTS, 'config-agent-a2a-agents.png'),
    });
    await dialog.getByRole('button', { name: 'Save agent' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await getAgent(agent.id)).a2a_agents).toEqual([
      { a2a_agent_id: billing.id, tool_filters: ['answer'], tools_requiring_approval: ['ask'] },
    ]);
    await page
      .getByRole('row', { name: new RegExp(agent.name) })
      .getByText('0 MCP · 1 A2A')
      .waitFor();

    // Opened again from a fresh page load (the dialog's close dropped ?edit from the address).
    await page.goto(`${stack.api.url}/console/config/agents?edit=${agent.id}`);
    dialog = page.getByRole('dialog', { name: `Edit agent ${agent.name}` });
    const section = dialog.getByRole('group', { name: 'A2A agents' });
    // The picker shows the remote agent's name once the project's A2A agents are read.
    await expect
      .poll(() => label(section, 'A2A agent 1').inputValue(), { timeout: 15_000 })
      .toBe(billing.name);
    await section.getByText('answer', { exact: true }).waitFor();
    await section.getByText('ask', { exact: true }).waitFor();
    // Saved again untouched, the list stays as it was.
    await dialog.getByRole('button', { name: 'Save agent' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await getAgent(agent.id)).a2a_agents).toEqual([
      { a2a_agent_id: billing.id, tool_filters: ['answer'], tools_requiring_approval: ['ask'] },
    ]);
    expect(world.problems()).toEqual([]);
  });

  it("shows the API's 400 for a remote agent deleted while the form offered it under its picker", async () => {
    const gone = await register();
    const agent = await world.agent();
    const page = await world.open(`/config/agents?edit=${agent.id}`);
    const dialog = page.getByRole('dialog', { name: `Edit agent ${agent.name}` });
    await dialog.getByRole('button', { name: 'Add A2A agent' }).click();
    const picker = label(dialog, 'A2A agent 1');
    await pick(page, picker, gone.name);
    const deleted = await stack.api.request('DELETE', `/api/agent-server/a2a-agents/${gone.id}`);
    expect(deleted.status).toBe(200);

    await dialog.getByRole('button', { name: 'Save agent' }).click();
    await dialog.getByText(/a2a_agents\.0\.a2a_agent_id does not name an existing A2A agent/).waitFor();
    expect(await describedBy(picker)).toMatch(/does not name an existing A2A agent/);
    expect((await getAgent(agent.id)).a2a_agents).toEqual([]);
  });

  it('sets OAuth client settings on a remote agent, authorizes it without anyone signing in, forgets it, and keeps the secret redacted', async () => {
    const earlier = world.problems().length; // the 400 provoked above
    const name = uniqueName('guarded');
    const page = await world.open('/config/a2a-agents');
    await page.getByRole('button', { name: 'New A2A agent' }).click();
    let form = page.getByRole('dialog', { name: 'New A2A agent' });
    await label(form, 'Name').fill(name);
    await label(form, 'Agent card URL').fill(guarded.cardUrl);
    await label(form, 'Client id').fill('console-client');
    await label(form, 'Client secret').fill('console-secret');
    await label(form, 'Scopes').fill('read');
    await pick(page, label(form, 'Grant'), /Client credentials/);
    await form.getByRole('button', { name: 'Create A2A agent' }).click();
    await form.waitFor({ state: 'hidden' });

    const row = page.getByRole('row', { name: new RegExp(name) });
    await row.getByText('unauthorized', { exact: true }).waitFor();
    await row.getByRole('button', { name: `Authorize ${name}` }).click();
    const authorizing = page.getByRole('dialog', { name: `Authorize ${name}` });
    await authorizing.getByText('Authorized: a token was obtained without anyone signing in.').waitFor();
    await authorizing.getByRole('button', { name: 'Close' }).click();
    await row.getByText('authorized', { exact: true }).waitFor();
    expect(tokens.requests()).toBe(1);

    await row.getByRole('button', { name: `Forget authorization of ${name}` }).click();
    const confirm = page.getByRole('dialog', { name: `Forget authorization of ${name}?` });
    await confirm.getByRole('button', { name: 'Forget authorization' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await row.getByText('unauthorized', { exact: true }).waitFor();

    await page.getByRole('button', { name: `Edit ${name}` }).click();
    form = page.getByRole('dialog', { name: `Edit A2A agent ${name}` });
    expect(await label(form, 'Client id').inputValue()).toBe('console-client');
    expect(await label(form, 'Client secret').inputValue()).toBe('[redacted]');
    await label(form, 'Scopes').fill('read, write');
    await label(form, 'Per-user tokens').check();
    await form.getByRole('button', { name: 'Save A2A agent' }).click();
    await form.waitFor({ state: 'hidden' });
    const list = await stack.api.request<Array<Record<string, unknown>>>(
      'GET',
      `/api/agent-server/a2a-agents?project_id=${world.projectId}`,
    );
    expect(list.body.data.find((a) => a.name === name)).toMatchObject({
      oauth: {
        client_id: 'console-client',
        client_secret: '[redacted]',
        scopes: ['read', 'write'],
        grant: 'client_credentials',
      },
      per_user_tokens: true,
      authorization: { status: 'unauthorized' },
    });
    expect(world.problems().slice(earlier)).toEqual([]);
  });
});
