/**
 * Getting around the console in a real browser against the real stack: the
 * waiting runs count in the side bar, the colour scheme switch, the
 * skip link, a tablet-width window, dialogs that give focus back, and the
 * pages an address names that do not exist.
 */
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEverythingServer, type RunningMcp } from '../../fixtures/mcp-servers.js';
import { noBrowser, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { uniqueName } from '../../helpers/factories.js';
import { noTemporal } from '../../helpers/services.js';
import { consoleWorld, poll, type ConsoleWorld, type RunView } from './console-world.js';

/** The page's DOM, as seen from inside `page.evaluate` (the tests compile without the DOM's types). */
interface PageDocument {
  documentElement: { dataset: Record<string, string | undefined>; scrollWidth: number };
  activeElement: { id: string } | null;
}
// Spelled out inside each `page.evaluate`: the function is sent to the page as source, without its closure.

/** Whether the side bar is on screen (folded away, it is moved off the left edge, not hidden). */
async function onScreen(nav: Locator): Promise<boolean> {
  const box = await nav.boundingBox();
  return box !== null && box.x + box.width > 0;
}

const scheme = (page: Page) =>
  page.evaluate(
    () =>
      (globalThis as unknown as { document: PageDocument }).document.documentElement.dataset
        .mantineColorScheme,
  );

describe.skipIf(noTemporal() || noBrowser())('console: navigation', () => {
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

  it('counts the runs waiting (here for approval) in the side bar, and the count falls when one is decided', async () => {
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
    const paused: RunView[] = [];
    for (const words of ['first', 'second']) {
      stack.vendor.script({ reply: { tool_calls: [{ name: 'echo', arguments: { message: words } }] } });
      paused.push(await world.converse({ agent_id: agent.id, message: `echo ${words}` }));
    }
    expect(paused.map((r) => r.status)).toEqual(['awaiting_approval', 'awaiting_approval']);

    const page = await world.open('/sessions');
    const approvals = page
      .getByRole('navigation', { name: 'Pages' })
      .getByRole('link', { name: /Waiting runs/ });
    await approvals.getByLabel('2 waiting').waitFor();

    stack.vendor.script({ reply: { text: 'echoed' } });
    const decided = await stack.api.request('POST', `/api/agent-server/runs/${paused[0]!.run_id}/approvals`, {
      approved_call_ids: paused[0]!.pending_approvals.map((p) => p.id),
      rejected_call_ids: [],
    });
    expect(decided.status).toBe(200);
    // Polled every 10 s in the side bar.
    await approvals.getByLabel('1 waiting').waitFor({ timeout: 20_000 });
    await poll(async () => {
      const r = await stack.api.request<RunView>('GET', `/api/agent-server/runs/${paused[0]!.run_id}`);
      return r.body.data.status === 'completed' ? true : undefined;
    }, 'the approved run to complete');
    expect(world.problems()).toEqual([]);
  });

  it('switches between light, dark and the system scheme, and remembers the choice', async () => {
    const page = await world.open('/usage');
    await page.emulateMedia({ colorScheme: 'light' });
    const toggle = page.getByRole('radiogroup', { name: 'Colour scheme' });
    await toggle.getByText('Dark').click();
    await expect.poll(() => scheme(page), { timeout: 10_000 }).toBe('dark');
    await stack.screenshot(page, 'usage-dark');
    await page.reload();
    await page.getByRole('navigation', { name: 'Pages' }).waitFor();
    expect(await scheme(page)).toBe('dark');

    await page.getByRole('radiogroup', { name: 'Colour scheme' }).getByText('System').click();
    await expect.poll(() => scheme(page), { timeout: 10_000 }).toBe('light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await expect.poll(() => scheme(page), { timeout: 10_000 }).toBe('dark');
    await page.getByRole('radiogroup', { name: 'Colour scheme' }).getByText('Light').click();
    await expect.poll(() => scheme(page), { timeout: 10_000 }).toBe('light');
    expect(world.problems()).toEqual([]);
  });

  it('offers a skip link first, and loads without router warnings', async () => {
    const before = stack.warnings.length;
    const page = await world.open('/traces');
    await page.getByRole('navigation', { name: 'Pages' }).waitFor();
    await page.keyboard.press('Tab');
    const skip = page.getByRole('link', { name: 'Skip to content' });
    expect(
      await skip.evaluate(
        (el) => el === (globalThis as unknown as { document: PageDocument }).document.activeElement,
      ),
    ).toBe(true);
    await page.keyboard.press('Enter');
    await expect
      .poll(
        () =>
          page.evaluate(
            () => (globalThis as unknown as { document: PageDocument }).document.activeElement?.id,
          ),
        { timeout: 10_000 },
      )
      .toBe('main');
    expect(stack.warnings.slice(before).filter((w) => /HydrateFallback/.test(w))).toEqual([]);
  });

  it('at 768 px folds the side bar behind the menu and keeps wide tables inside the page', async () => {
    const agent = await world.agent();
    stack.vendor.script({ reply: { text: 'narrow' } });
    await world.converse({ agent_id: agent.id, message: 'hello' });
    const page = await world.open('/sessions');
    await page.setViewportSize({ width: 768, height: 900 });
    const nav = page.getByRole('navigation', { name: 'Pages' });
    const menu = page.getByRole('button', { name: 'Menu' });
    await menu.waitFor();
    await expect.poll(() => onScreen(nav), { timeout: 10_000 }).toBe(false);
    await page.getByRole('table').first().waitFor();
    await page.goto(`${stack.api.url}/console/traces`);
    await page.getByRole('table').first().waitFor();
    expect(
      await page.evaluate(
        () => (globalThis as unknown as { document: PageDocument }).document.documentElement.scrollWidth,
      ),
    ).toBeLessThanOrEqual(768);
    await menu.click();
    await expect.poll(() => onScreen(nav), { timeout: 10_000 }).toBe(true);
    await nav.getByRole('link', { name: 'Usage' }).click();
    await page.waitForURL(/\/console\/usage/);
    // Choosing a page closes the menu again.
    await expect.poll(() => onScreen(nav), { timeout: 10_000 }).toBe(false);
    expect(world.problems()).toEqual([]);
  });

  it('gives focus back to the button that opened a dialog', async () => {
    const page = await world.open('/config/providers');
    const add = page.getByRole('button', { name: /New provider/ });
    await add.click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await expect
      .poll(
        () =>
          add.evaluate(
            (el) => el === (globalThis as unknown as { document: PageDocument }).document.activeElement,
          ),
        { timeout: 10_000 },
      )
      .toBe(true);
  });

  it('says "No such …" with a way back for addresses naming nothing, in the app frame', async () => {
    const page = await world.open('/prompts/no-such-prompt');
    await page.getByText('No such prompt').waitFor();
    await page.getByRole('navigation', { name: 'Pages' }).waitFor();
    await page.getByRole('link', { name: 'All prompts' }).click();
    await page.waitForURL(/\/console\/prompts$/);

    await page.goto(`${stack.api.url}/console/playground?agent=not-an-id`);
    await page.getByText('No such agent').waitFor();
    expect(await page.getByText(/GUID|must be a valid/).count()).toBe(0);
    await page.getByRole('link', { name: 'Choose an agent' }).waitFor();
  });
});
