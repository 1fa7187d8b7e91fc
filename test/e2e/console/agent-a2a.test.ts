/**
 * The agent form's A2A agents section in a real browser against a real
 * stack and a real remote A2A agent (the SDK-built fixture): a registered
 * remote agent picked, its skills read from its card as the filters'
 * suggestions, saved and shown again after a reload; a remote agent deleted
 * while the form still offers it comes back as the API's 400 under its picker.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startA2aTestAgent, type A2aTestAgent } from '../../fixtures/a2a-agents.js';
import { noBrowser, SCREENSHOTS, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { uniqueName } from '../../helpers/factories.js';
import { noTemporal } from '../../helpers/services.js';
import { consoleWorld, type ConsoleWorld } from './console-world.js';
import { describedBy, label, pick } from './form-helpers.js';

interface AgentView {
  a2a_agents: Array<{ a2a_agent_id: string; tool_filters: string[]; tools_requiring_approval: string[] }>;
}

describe.skipIf(noTemporal() || noBrowser())('console: A2A agents on the agent form', () => {
  let stack: ConsoleStack;
  let world: ConsoleWorld;
  let remote: A2aTestAgent;

  beforeAll(async () => {
    [stack, remote] = await Promise.all([startConsoleStack(), startA2aTestAgent()]);
    world = await consoleWorld(stack);
  }, 180_000);
  afterAll(async () => {
    await Promise.all([stack?.close(), remote?.close()]);
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
    await page.getByRole('row', { name: new RegExp(agent.name) }).getByText('0 MCP · 1 A2A').waitFor();

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
});
