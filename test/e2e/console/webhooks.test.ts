/**
 * The console's Webhooks tab in a real browser against a real stack: a
 * webhook registered through the UI (the API's field error shown under its
 * field), its secret shown exactly once, then disabled and deleted, each
 * checked through the REST API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noBrowser, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { createProject, type ProjectData } from '../../helpers/factories.js';
import { noTemporal } from '../../helpers/services.js';
import { appErrors, describedBy, label, openIn } from './form-helpers.js';

interface WebhookData {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
}

describe.skipIf(noTemporal() || noBrowser())('console: webhooks', () => {
  let stack: ConsoleStack;
  let project: ProjectData;

  beforeAll(async () => {
    stack = await startConsoleStack();
    project = await createProject(stack.api);
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  const listed = async () =>
    (await stack.api.request<WebhookData[]>('GET', `/api/agent-server/webhooks?project_id=${project.id}`))
      .body.data;

  it('registers a webhook, shows its secret once, disables and deletes it', async () => {
    const page = await openIn(stack, '/config/webhooks', project.id);
    const url = 'http://127.0.0.1:9/hooks/console';
    await page.getByRole('button', { name: 'New webhook' }).click();
    const dialog = page.getByRole('dialog', { name: 'New webhook' });
    await label(dialog, 'URL').fill('ftp://example.com/x');
    await dialog.getByRole('button', { name: 'Create webhook' }).click();
    const input = label(dialog, 'URL');
    await expect.poll(() => input.getAttribute('aria-invalid')).toBe('true');
    expect(await describedBy(input)).toMatch(/url must be an http or https URL/);

    await input.fill(url);
    await dialog.getByRole('button', { name: 'Create webhook' }).click();
    const shown = page.getByRole('dialog', { name: 'Webhook secret' });
    await shown.waitFor();
    const secret = (await shown.getByTestId('webhook-secret').textContent())!.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await shown.getByRole('button', { name: 'I have copied it' }).click();
    await shown.waitFor({ state: 'hidden' });

    const [hook] = await listed();
    expect(hook).toMatchObject({ url, events: ['run.completed', 'run.failed'], enabled: true });
    const row = page.getByRole('row', { name: new RegExp(url) });
    await row.waitFor();
    expect(await page.content()).not.toContain(secret);
    await page.reload();
    await page.getByRole('row', { name: new RegExp(url) }).waitFor();
    expect(await page.content()).not.toContain(secret);

    await page.getByRole('button', { name: `Edit ${url}` }).click();
    const edit = page.getByRole('dialog', { name: new RegExp(`Edit webhook`) });
    await edit.getByRole('switch', { name: 'Enabled' }).click({ force: true });
    await edit.getByRole('button', { name: 'Save webhook' }).click();
    await edit.waitFor({ state: 'hidden' });
    await expect.poll(async () => (await listed())[0]?.enabled).toBe(false);
    await page.getByRole('row', { name: new RegExp(`${url}.*disabled`) }).waitFor();

    await page.getByRole('button', { name: `Delete ${url}` }).click();
    await page
      .getByRole('dialog', { name: `Delete ${url}?` })
      .getByRole('button', { name: 'Delete' })
      .click();
    await page.getByRole('row', { name: new RegExp(url) }).waitFor({ state: 'detached' });
    expect(await listed()).toEqual([]);
    expect(appErrors(stack.errors)).toEqual([]);
  });
});
