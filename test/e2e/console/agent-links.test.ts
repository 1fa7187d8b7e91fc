/**
 * The agent form's Access and Sub-agents sections in a real browser against
 * a real stack: MCP exposure with its message for calls without one and a
 * sub-agent requiring approval saved (the MCP URL shown with the project
 * id), both kept by a save that did not touch them, the API's refusal of a cycle shown under the sub-agents
 * picker, and a run's source as a badge in the conversation's runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noBrowser, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { noTemporal } from '../../helpers/services.js';
import { consoleWorld, type ConsoleWorld } from './console-world.js';
import { describedBy, label } from './form-helpers.js';

interface AgentView {
  expose: { mcp: boolean; a2a: boolean; mcp_message?: string | null };
  sub_agents: Array<{ agent_id: string; description?: string | null; requires_approval: boolean }>;
}

describe.skipIf(noTemporal() || noBrowser())('console: agent access and sub-agents', () => {
  let stack: ConsoleStack;
  let world: ConsoleWorld;

  beforeAll(async () => {
    stack = await startConsoleStack();
    world = await consoleWorld(stack);
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  const getAgent = async (id: string) =>
    (await stack.api.request<AgentView>('GET', `/api/agent-server/agents/${id}`)).body.data;

  it('saves MCP exposure with its message and a sub-agent requiring approval, keeps them through an untouched save, refuses a cycle under the picker, and badges a run by source', async () => {
    const parent = await world.agent();
    const child = await world.agent();

    const page = await world.open(`/config/agents?edit=${parent.id}`);
    let dialog = page.getByRole('dialog', { name: `Edit agent ${parent.name}` });
    await dialog.getByRole('checkbox', { name: 'MCP' }).check();
    await dialog.getByText(`/api/mcp/${world.projectId}`).waitFor();
    await label(dialog, 'Message when called without one').fill('Write the daily report');
    await label(dialog, 'Sub-agents').click();
    await page.getByRole('option', { name: child.name }).click();
    await label(dialog, `What ${child.name} does`).fill('Looks things up');
    await dialog.getByRole('checkbox', { name: `${child.name} requires approval` }).check();
    await dialog.getByRole('button', { name: 'Save agent' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const saved = {
      expose: { mcp: true, a2a: false, mcp_message: 'Write the daily report' },
      sub_agents: [{ agent_id: child.id, description: 'Looks things up', requires_approval: true }],
    };
    expect(await getAgent(parent.id)).toMatchObject(saved);

    // Reopened, the form shows the saved URL and a save leaves both as they were;
    // the child naming its parent closes a cycle.
    await page.goto(`${stack.api.url}/console/config/agents?edit=${parent.id}`);
    dialog = page.getByRole('dialog', { name: `Edit agent ${parent.name}` });
    await dialog.getByText(`/api/mcp/${world.projectId}`).waitFor();
    await dialog.getByRole('button', { name: 'Save agent' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await getAgent(parent.id)).toMatchObject(saved);
    await page.goto(`${stack.api.url}/console/config/agents?edit=${child.id}`);
    dialog = page.getByRole('dialog', { name: `Edit agent ${child.name}` });
    const picker = label(dialog, 'Sub-agents');
    await picker.click();
    await page.getByRole('option', { name: parent.name }).click();
    await dialog.getByRole('button', { name: 'Save agent' }).click();
    await dialog.getByText(/sub_agents would make a cycle/).waitFor();
    expect(await describedBy(picker)).toMatch(/cycle/);
    expect((await getAgent(child.id)).sub_agents).toEqual([]);

    stack.vendor.script({ reply: { text: 'Hello' } });
    const run = await world.converse({ agent_id: parent.id, message: 'Hi' });
    await page.goto(`${stack.api.url}/console/sessions/${run.conversation_id}`);
    await page.locator(`tr[data-run-id="${run.run_id}"] [data-run-source="rest"]`).waitFor();
  });
});
