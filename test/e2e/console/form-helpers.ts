/** Helpers for the console's form tests (config, prompts, usage). */
import type { Locator, Page } from 'playwright-core';
import type { ConsoleStack } from '../../helpers/browser.js';

/** The browser logs each 4xx answer as "Failed to load resource"; these tests provoke some on purpose. */
export const appErrors = (errors: string[]) =>
  errors.filter((e) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(e));

/** A page at `pathname` working in `projectId` (the console remembers the project in localStorage). */
export async function openIn(stack: ConsoleStack, pathname: string, projectId: string): Promise<Page> {
  const page = await stack.open(pathname);
  await page.evaluate((id) => localStorage.setItem('agent-server.project', id), projectId);
  await page.reload();
  page.setDefaultTimeout(15_000);
  return page;
}

/** The text an input is described by (its description and, when there is one, its error). */
export async function describedBy(input: Locator): Promise<string> {
  const ids = ((await input.getAttribute('aria-describedby')) ?? '').split(/\s+/).filter(Boolean);
  const texts = await Promise.all(ids.map((id) => input.page().locator(`[id="${id}"]`).textContent()));
  return texts.join(' | ');
}

/** An input by its label's text; a required input's label ends with " *". */
export function label(scope: Page | Locator, text: string): Locator {
  return scope.getByLabel(new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}( \\*)?$`));
}

/** Waits for running CSS transitions (a dialog fading in or out) before a screenshot. */
export async function settled(page: Page): Promise<void> {
  await page.evaluate(() => {
    // Runs in the browser (the tests' tsconfig has no DOM types).
    const doc = (
      globalThis as unknown as { document: { getAnimations(): Array<{ finished: Promise<unknown> }> } }
    ).document;
    return Promise.all(doc.getAnimations().map((a) => a.finished.catch(() => undefined)));
  });
}

/** Chooses `option` in a Mantine Select. */
export async function pick(page: Page, select: Locator, option: string | RegExp) {
  await select.click();
  await page.getByRole('option', { name: option }).click();
}
