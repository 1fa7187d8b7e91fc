/**
 * The agent form's versions, memory tools and the project's memory store
 * embedding model, in a real browser against a real stack: an earlier
 * version pinned from the Versions panel is the one in force (the form,
 * the API and the next run say so); memory tools turned on in the form are
 * saved; the project form saves the embedding model it offers and shows the
 * API's refusal of a model without embeddings under its select.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noBrowser, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { createModel, createProvider } from '../../helpers/factories/config.js';
import { noTemporal } from '../../helpers/services.js';
import { consoleWorld, type ConsoleWorld } from './console-world.js';
import { describedBy, label, pick } from './form-helpers.js';

interface AgentView {
  version: number;
  max_iterations: number;
  memory_tools: boolean;
}

describe.skipIf(noTemporal() || noBrowser())('console: agent versions, memory tools, store embedding', () => {
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

  it('pins an earlier version from the Versions panel: the form, the API and the next run have it in force', async () => {
    const agent = await world.agent({ max_iterations: 5 });
    const patched = await stack.api.request('PATCH', `/api/agent-server/agents/${agent.id}`, {
      max_iterations: 9,
    });
    expect(patched.status).toBe(200);

    const page = await world.open(`/config/agents?edit=${agent.id}`);
    const dialog = page.getByRole('dialog', { name: `Edit agent ${agent.name}` });
    await dialog.getByText('version 2 in force').waitFor();
    const versions = dialog.getByRole('table', { name: 'Versions' });
    const v2 = versions.getByRole('row').filter({ hasText: 'in force' });
    expect(await v2.textContent()).toContain('max_iterations: 5 → 9');
    expect(await versions.getByRole('row').filter({ hasText: 'first version' }).count()).toBe(1);

    await dialog.getByRole('button', { name: 'Pin version 1' }).click();
    await dialog.getByText('Put version 1 back in force?').waitFor();
    await dialog.getByRole('button', { name: 'Pin version 1' }).click();
    // The form starts again from the pinned agent.
    await dialog.getByText('version 1 in force').waitFor();
    expect(await label(dialog, 'Max iterations').inputValue()).toBe('5');
    await stack.screenshot(page, 'agent-versions');
    expect(await getAgent(agent.id)).toMatchObject({ version: 1, max_iterations: 5 });

    // The next run records the version it ran with, and the door it came through.
    stack.vendor.script({ reply: { text: 'Pinned answer' } });
    const run = await world.converse({ agent_id: agent.id, message: 'Which version?' });
    await page.goto(`${stack.api.url}/console/sessions/${run.conversation_id}`);
    await page.locator(`tr[data-run-id="${run.run_id}"]`).getByRole('button', { name: 'Details' }).click();
    await page.getByText('Agent version 1 · door api').waitFor();
    expect(world.problems()).toEqual([]);
  });

  it('turns memory tools on in the agent form and saves them', async () => {
    const agent = await world.agent();
    expect((await getAgent(agent.id)).memory_tools).toBe(false);
    const page = await world.open(`/config/agents?edit=${agent.id}`);
    const dialog = page.getByRole('dialog', { name: `Edit agent ${agent.name}` });
    const memory = dialog.getByRole('checkbox', { name: 'Memory tools' });
    expect(await memory.isChecked()).toBe(false);
    await memory.check();
    await dialog.getByRole('button', { name: 'Save agent' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await getAgent(agent.id)).toMatchObject({ memory_tools: true, version: 2 });

    // Opened again, the form shows it on.
    await page.getByRole('button', { name: `Edit ${agent.name}` }).click();
    const again = page
      .getByRole('dialog', { name: `Edit agent ${agent.name}` })
      .getByRole('checkbox', { name: 'Memory tools' });
    await again.waitFor();
    expect(await again.isChecked()).toBe(true);
    expect(world.problems()).toEqual([]);
  });

  it("chooses the project's memory store embedding model; a model without embeddings is refused under the select", async () => {
    const anthropic = await createProvider(stack.api, {
      provider_type: 'anthropic',
      base_url: `${stack.vendor.url}/anthropic`,
    });
    const claude = await createModel(stack.api, world.projectId, {
      provider_id: anthropic.id,
      provider_type: 'anthropic',
      model_id: 'claude-test',
    });
    const page = await world.open(`/config/projects?edit=${world.projectId}`);
    const dialog = page.getByRole('dialog', { name: /^Edit project / });
    const select = label(dialog, 'Memory store embedding model');

    await pick(page, select, new RegExp(claude.name));
    await dialog.getByRole('button', { name: 'Save project' }).click();
    await expect.poll(() => select.getAttribute('aria-invalid')).toBe('true');
    expect(await describedBy(select)).toContain(
      'store_embedding.model_id names a anthropic model: that provider type has no embeddings',
    );

    await pick(page, select, /\(gpt-test\)$/);
    await dialog.getByRole('button', { name: 'Save project' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const project = await stack.api.request<{ store_embedding: unknown }>(
      'GET',
      `/api/agent-server/projects/${world.projectId}`,
    );
    expect(project.body.data.store_embedding).toEqual({ model_id: world.modelId, dims: null, fields: null });
    // The refusal on purpose was the only failed request.
    const refused = (p: string) => /\b400\b/.test(p) && p.includes(`/projects/${world.projectId}`);
    expect(world.problems().filter((p) => !refused(p))).toEqual([]);
  });
});
