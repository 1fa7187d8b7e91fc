/**
 * The agent form in a real browser against a real stack warns while the
 * agent is being configured, before its first turn, of what its turns would
 * not get: a sandbox this server does not have, a model the project's
 * virtual key does not grant, template variables only a conversation's
 * context gives a value. Each warning sits in the section of its field and
 * goes when the field is put right; the saved agent carries the same ones.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noBrowser, SCREENSHOTS, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { createProject, uniqueName, type ProjectData } from '../../helpers/factories.js';
import { createModel, createProvider, createVirtualKey } from '../../helpers/factories/config.js';
import { createPrompt } from '../../helpers/factories/content.js';
import { noTemporal } from '../../helpers/services.js';
import { appErrors, label, openIn, pick, settled } from './form-helpers.js';

describe.skipIf(noTemporal() || noBrowser())('console: guardrails in the agent form', () => {
  let stack: ConsoleStack;
  let project: ProjectData;

  beforeAll(async () => {
    stack = await startConsoleStack(); // no SANDBOX_ENABLED: this server has no sandbox
    project = await createProject(stack.api);
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('warns of the sandbox, an ungranted model and unvalued template variables while the agent is configured', async () => {
    const provider = await createProvider(stack.api, { base_url: `${stack.vendor.url}/v1` });
    const key = await createVirtualKey(stack.api, {
      providers: [{ provider_id: provider.id, model_names: ['gpt-4o-mini'] }],
    });
    await stack.api.request('PATCH', `/api/agent-server/projects/${project.id}`, { virtual_key_id: key.id });
    const granted = await createModel(stack.api, project.id, {
      provider_id: provider.id,
      model_id: 'gpt-4o-mini',
    });
    const ungranted = await createModel(stack.api, project.id, {
      provider_id: provider.id,
      model_id: 'gpt-4o',
    });
    const prompt = await createPrompt(stack.api, project.id, {
      template: 'Help {{customer}} with their order.',
    });

    const page = await openIn(stack, '/config/agents', project.id);
    await page.getByRole('button', { name: 'New agent' }).click();
    const dialog = page.getByRole('dialog', { name: 'New agent' });
    const agentSection = dialog.getByRole('group', { name: 'Agent' });
    const sandboxSection = dialog.getByRole('group', { name: 'Sandbox' });
    await label(dialog, 'Name').fill(uniqueName('agent'));

    // (b) a model the project's key does not grant
    await pick(page, label(dialog, 'Model'), new RegExp(ungranted.name));
    const notGranted = agentSection.getByText(
      `model_id: the project's virtual key "${key.name}" does not grant ${provider.name}/gpt-4o`,
    );
    await notGranted.waitFor();

    // (c) a variable of the prompt's version that nothing gives a value
    await pick(page, label(dialog, 'Prompt'), prompt.name);
    const unvalued = agentSection.getByText(
      /^prompt_id: the prompt's latest version \(v1\) uses \{\{customer\}\}/,
    );
    await unvalued.waitFor();

    // (a) the sandbox, on a server without one
    expect(await sandboxSection.getByRole('status').count()).toBe(0);
    await dialog.getByRole('switch', { name: /Sandbox enabled/ }).check();
    await sandboxSection
      .getByText(/^sandbox\.enabled is true but this server has no sandbox backend/)
      .waitFor();

    await page.setViewportSize({ width: 1400, height: 2200 });
    await settled(page);
    await dialog.screenshot({ path: path.join(SCREENSHOTS, 'agent-guardrails.png') });
    await page.setViewportSize({ width: 1400, height: 900 });

    // Put right, a warning goes: a model the key grants.
    await pick(page, label(dialog, 'Model'), new RegExp(granted.name));
    await notGranted.waitFor({ state: 'detached' });
    expect(await unvalued.count()).toBe(1);

    // Saved as it stands: the agent carries the warnings the form showed.
    await dialog.getByRole('button', { name: 'Create agent' }).click();
    await dialog.waitFor({ state: 'hidden', timeout: 20_000 });
    const agents = await stack.api.request<Array<{ warnings: string[] }>>(
      'GET',
      `/api/agent-server/agents?project_id=${project.id}`,
    );
    expect(agents.body.data[0]!.warnings).toEqual([
      expect.stringMatching(/^sandbox\.enabled is true/),
      expect.stringMatching(/^prompt_id: .*\{\{customer\}\}/),
    ]);
    expect(appErrors(stack.errors)).toEqual([]);
  });
});
