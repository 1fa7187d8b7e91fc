/**
 * The console's Prompts page in a real browser against a real stack: a
 * prompt and its versions created through the UI, the side-by-side diff, the
 * production label moved once confirmed (checked through the REST API) and
 * its label history, and the link that opens a version in the playground.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noBrowser, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { createProject, uniqueName, type ProjectData } from '../../helpers/factories.js';
import { createModel } from '../../helpers/factories/config.js';
import { createPrompt, type PromptData } from '../../helpers/factories/content.js';
import { noTemporal } from '../../helpers/services.js';
import { appErrors, describedBy, label, openIn, settled } from './form-helpers.js';

const V1 = 'You are a helpful assistant for {{company}}.\nAnswer briefly.\nSign as {{name}}.';
const V2 = 'You are a helpful assistant for {{company}}.\nAnswer in detail, with sources.\nSign as {{name}}.';

describe.skipIf(noTemporal() || noBrowser())('console: prompts', () => {
  let stack: ConsoleStack;
  let project: ProjectData;
  const byName = (name: string) =>
    stack.api.request<PromptData>(
      'GET',
      `/api/agent-server/prompts/by-name?name=${name}&project_id=${project.id}`,
    );

  beforeAll(async () => {
    stack = await startConsoleStack();
    project = await createProject(stack.api);
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('creates a prompt and a version through the UI, diffs them, moves production, and links a version to the playground', async () => {
    const page = await openIn(stack, '/prompts', project.id);
    await page.getByText('No prompt in this project').waitFor();
    const name = uniqueName('prompt');

    await page.getByRole('button', { name: 'New prompt' }).click();
    let dialog = page.getByRole('dialog', { name: 'New prompt' });
    await label(dialog, 'Name').fill(name);
    await label(dialog, 'Template').fill(V1);
    await dialog.getByRole('button', { name: 'Create prompt' }).click();
    await page.waitForURL(new RegExp(`/console/prompts/${name}$`));
    expect((await byName(name)).body.data).toMatchObject({
      latest_version: 1,
      labels: { production: null, latest: 1 },
    });

    await page.getByRole('button', { name: 'New version' }).click();
    dialog = page.getByRole('dialog', { name: `New version of ${name}` });
    const template = label(dialog, 'Template');
    expect(await template.inputValue()).toBe(V1); // starts from the newest version
    await template.fill(V2);
    await label(dialog, 'Commit message').fill('More detail');
    await dialog.getByRole('button', { name: 'Create version 2' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('tab', { name: 'Versions (2)' }).waitFor();
    expect((await byName(name)).body.data).toMatchObject({
      latest_version: 2,
      labels: { production: null, latest: 2 },
    });

    // Move production onto v1, then onto v2 (another version), each once confirmed and checked
    // through the API; a cancelled confirmation moves nothing.
    await page.getByRole('combobox', { name: 'Move production to' }).click();
    await page.getByRole('option', { name: /^v1:/ }).click();
    await page.getByRole('button', { name: 'Move production' }).click();
    const confirm = page.getByRole('dialog', { name: `Move production of ${name}?` });
    await confirm.getByText('production is on no version yet: it goes to v1.').waitFor();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'hidden' });
    expect((await byName(name)).body.data.labels).toEqual({ production: null, latest: 2 });

    await page.getByRole('button', { name: 'Move production' }).click();
    await confirm.getByRole('button', { name: 'Move to v1' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await expect
      .poll(async () => (await byName(name)).body.data.labels)
      .toEqual({ production: 1, latest: 2 });
    await page.getByRole('button', { name: 'Make production' }).click(); // on v2, the open one
    await confirm.getByText('production moves from v1 to v2.').waitFor();
    await settled(page);
    await stack.screenshot(page, 'prompts-move-production');
    await confirm.getByRole('button', { name: 'Move to v2' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await expect
      .poll(async () => (await byName(name)).body.data.labels)
      .toEqual({ production: 2, latest: 2 });

    // The label history: who moved production, when, from which version to which; newest first.
    await page.getByRole('tab', { name: 'Label history' }).click();
    const history = page.getByRole('table', { name: 'Label history' });
    await history.getByText('v1 → v2').waitFor();
    const rows = history.locator('tbody tr');
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(0).locator('td').allTextContents()).toEqual([
      expect.any(String),
      'production',
      'v1 → v2',
      'local',
    ]);
    expect(await rows.nth(1).locator('td').nth(2).textContent()).toBe('first set, on v1');
    await stack.screenshot(page, 'prompts-label-history');
    const versions = await stack.api.request<Array<{ version: number; labels: string[] }>>(
      'GET',
      `/api/agent-server/prompts/${name}/versions?project_id=${project.id}`,
    );
    expect(versions.body.data.map((v) => [v.version, v.labels])).toEqual([
      [2, ['production', 'latest']],
      [1, []],
    ]);

    // The side-by-side diff: v1's line removed on the left, v2's added on the right.
    await page.getByRole('tab', { name: 'Diff' }).click();
    const diff = page.getByRole('table', { name: 'Diff of v1 and v2' });
    await diff.waitFor();
    expect(await diff.locator('td[data-op="del"]').allTextContents()).toEqual(['−Answer briefly.']);
    expect(await diff.locator('td[data-op="add"]').allTextContents()).toEqual([
      '+Answer in detail, with sources.',
    ]);
    expect(await diff.locator('td[data-op="same"]').count()).toBe(4);
    await settled(page);
    await stack.screenshot(page, 'prompts-diff');

    // "Open in playground" carries the agent, the prompt name and the version.
    const model = await createModel(stack.api, project.id);
    const prompt = (await byName(name)).body.data;
    const agent = await stack.api.request<{ id: string; name: string }>(
      'POST',
      `/api/agent-server/agents?project_id=${project.id}`,
      { name: uniqueName('agent'), model_id: model.id, prompt_id: prompt.id },
    );
    await page.reload();
    await page.getByRole('tab', { name: 'Versions (2)' }).click();
    await page.getByRole('button', { name: /^v1 First version/ }).click(); // open v1's panel
    await page.getByRole('button', { name: 'Open v1 in the playground' }).click();
    const item = page.getByRole('menuitem', { name: `${agent.body.data.name} (uses this prompt)` });
    expect(await item.getAttribute('href')).toBe(
      `/console/playground?project=${project.id}&agent=${agent.body.data.id}&prompt=${name}&version=1`,
    );
    await item.click();
    await page.waitForURL(/\/console\/playground\?/);
    expect(new URL(page.url()).searchParams.get('version')).toBe('1');
    expect(appErrors(stack.errors)).toEqual([]);
  });

  it('shows the API field errors next to their fields (a name already taken, a missing commit message)', async () => {
    const existing = await createPrompt(stack.api, project.id);
    const page = await openIn(stack, '/prompts', project.id);
    await page.getByRole('button', { name: 'New prompt' }).click();
    const dialog = page.getByRole('dialog', { name: 'New prompt' });
    await label(dialog, 'Name').fill(existing.name);
    await label(dialog, 'Template').fill('Hello');
    await label(dialog, 'Commit message').fill('');
    await dialog.getByRole('button', { name: 'Create prompt' }).click();
    const commit = label(dialog, 'Commit message');
    await expect.poll(() => commit.getAttribute('aria-invalid')).toBe('true');
    expect(await describedBy(commit)).toMatch(/commit_message/);

    await commit.fill('first');
    await dialog.getByRole('button', { name: 'Create prompt' }).click();
    const nameInput = label(dialog, 'Name');
    await expect.poll(() => nameInput.getAttribute('aria-invalid')).toBe('true');
    expect(await describedBy(nameInput)).toContain('a prompt with this name already exists');
    expect(appErrors(stack.errors)).toEqual([]);
  });
});
