import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noBrowser, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { noTemporal } from '../../helpers/services.js';

const TOKEN = 'console-admin-token-0123456789';

describe.skipIf(noTemporal() || noBrowser())('the console shell', () => {
  let stack: ConsoleStack;
  beforeAll(async () => {
    stack = await startConsoleStack({ ADMIN_TOKEN: TOKEN });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('serves the app at /console with immutable hashed assets and index.html for deep links', async () => {
    const index = await fetch(`${stack.api.url}/console/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const html = await index.text();
    const asset = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(asset).toBeDefined();
    const js = await fetch(`${stack.api.url}${asset}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    const deep = await fetch(`${stack.api.url}/console/traces/abc`);
    expect(await deep.text()).toBe(html);
    expect(
      (await fetch(`${stack.api.url}/console/assets/..%2F..%2Fpackage.json`)).headers.get('content-type'),
    ).toMatch(/html/);
  });

  it('asks for ADMIN_TOKEN once, then every page works with it', async () => {
    const page = await stack.open('/playground');
    const dialog = page.getByRole('dialog', { name: 'Admin token' });
    await dialog.waitFor();
    await dialog.getByLabel('ADMIN_TOKEN').fill(TOKEN);
    await dialog.getByRole('button', { name: 'Continue' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page
      .getByRole('navigation', { name: 'Pages' })
      .getByRole('link', { name: 'Configuration' })
      .click();
    await page.waitForURL(/\/console\/config/);
    await page.reload();
    // Kept in this tab: no second prompt.
    await page.getByRole('navigation', { name: 'Pages' }).waitFor();
    expect(await page.getByRole('dialog', { name: 'Admin token' }).count()).toBe(0);
    await stack.screenshot(page, 'shell');
    // The prompt's own 401s are the browser's network errors; nothing else may be logged.
    expect(stack.errors.filter((e) => !/status of 401/.test(e))).toEqual([]);
  });

  it('keeps the token in the tab only, and forgets one the server refuses', async () => {
    const page = await stack.open('/config');
    const kept = () => page.evaluate(() => sessionStorage.getItem('agent-server.admin-token'));
    await page.evaluate(() => sessionStorage.setItem('agent-server.admin-token', 'wrong-token-0123456789'));
    await page.reload();
    const dialog = page.getByRole('dialog', { name: 'Admin token' });
    await dialog.waitFor();
    expect(await kept()).toBeNull();
    await dialog.getByLabel('ADMIN_TOKEN').fill(TOKEN);
    await dialog.getByRole('button', { name: 'Continue' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await kept()).toBe(TOKEN);
    expect(await page.evaluate(() => localStorage.getItem('agent-server.admin-token'))).toBeNull();
    // Another tab of the same browser does not find it.
    const other = await page.context().newPage();
    await other.goto(page.url());
    await other.getByRole('dialog', { name: 'Admin token' }).waitFor();
    await other.close();
  });

  it('shows "No such page" in the app frame for unknown addresses under a page, at a stable address', async () => {
    const page = await stack.open('/config');
    await page.evaluate((token) => sessionStorage.setItem('agent-server.admin-token', token), TOKEN);
    for (const path of ['/config/foo', '/config/providers/foo', '/traces/abc/def']) {
      await page.goto(`${stack.api.url}/console${path}`);
      await page.getByText('No such page').waitFor({ timeout: 10_000 });
      await page.getByRole('navigation', { name: 'Pages' }).waitFor();
      await page.getByRole('link', { name: 'Go to the playground' }).waitFor();
      // A redirect loop would keep growing the address (…/providers/providers/…).
      await page.waitForTimeout(500);
      expect(new URL(page.url()).pathname).toBe(`/console${path}`);
    }
    await page.getByRole('link', { name: 'Go to the playground' }).click();
    await page.waitForURL(/\/console\/playground$/);
    // The section itself still opens its first tab.
    await page.goto(`${stack.api.url}/console/config`);
    await page.waitForURL(/\/console\/config\/providers$/);
    await page.getByRole('tab', { name: 'Providers', selected: true }).waitFor();
    expect(await page.getByText('No such page').count()).toBe(0);
  });

  it("keeps a chosen project that is older than the picker's newest 200", async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const old = await stack.api.request<{ id: string; name: string }>(
      'POST',
      '/api/agent-server/projects',
      { name: `old-${Date.now()}` },
      auth,
    );
    for (let i = 0; i < 201; i++)
      await stack.api.request(
        'POST',
        '/api/agent-server/projects',
        { name: `newer-${Date.now()}-${i}` },
        auth,
      );
    const page = await stack.open('/config');
    await page.evaluate(
      ([token, id]) => {
        sessionStorage.setItem('agent-server.admin-token', token!);
        localStorage.setItem('agent-server.project', id!);
      },
      [TOKEN, old.body.data.id],
    );
    await page.reload();
    await expect
      // The page loads the picker's 200 projects, then the chosen one by id: on a busy CI
      // machine that outlasted expect.poll's default second (seen once).
      .poll(() => page.getByRole('combobox', { name: 'Project' }).inputValue(), { timeout: 15_000 })
      .toBe(old.body.data.name);
  });
});
