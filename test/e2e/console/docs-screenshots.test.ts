/**
 * The screenshots the documentation shows (docs/images/): the playground
 * after a turn, that turn's trace, and the usage page, each in the light and
 * the dark scheme. Every run takes them into test-results/console/ and checks
 * the pages render in both schemes; `DOCS_SCREENSHOTS=1` also writes them to
 * docs/images/ (how the committed pictures were made).
 */
import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noBrowser, SCREENSHOTS, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { noTemporal } from '../../helpers/services.js';
import { consoleWorld, poll, type ConsoleWorld } from './console-world.js';

const DOCS_IMAGES = path.resolve(import.meta.dirname, '../../../docs/images');
const SCHEMES = ['light', 'dark'] as const;

describe.skipIf(noTemporal() || noBrowser())('console: the documentation screenshots', () => {
  let stack: ConsoleStack;
  let world: ConsoleWorld;

  beforeAll(async () => {
    stack = await startConsoleStack();
    world = await consoleWorld(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  async function shoot(page: Page, name: string, scheme: (typeof SCHEMES)[number]) {
    await page.evaluate((s) => localStorage.setItem('mantine-color-scheme-value', s), scheme);
    await page.reload();
    await page.getByRole('navigation', { name: 'Pages' }).waitFor();
    // A loaded CI machine can take seconds to reload the page.
    await expect
      .poll(
        () =>
          page.evaluate(
            () =>
              (
                globalThis as unknown as {
                  document: { documentElement: { dataset: Record<string, string> } };
                }
              ).document.documentElement.dataset.mantineColorScheme,
          ),
        { timeout: 15_000 },
      )
      .toBe(scheme);
    return `${name}-${scheme}`;
  }

  async function save(page: Page, file: string) {
    await stack.screenshot(page, file);
    if (process.env.DOCS_SCREENSHOTS !== '1') return;
    await mkdir(DOCS_IMAGES, { recursive: true });
    await copyFile(path.join(SCREENSHOTS, `${file}.png`), path.join(DOCS_IMAGES, `${file}.png`));
  }

  it('the playground, the trace view and the usage page, light and dark', async () => {
    const agent = await world.agent();
    stack.vendor.script({
      reply: { text: 'The order shipped on Tuesday and arrives Friday.', usage: { input: 412, output: 23 } },
    });
    const run = await world.converse({ agent_id: agent.id, message: 'Where is my order?' });
    expect(run.status).toBe('completed');
    const traceId = run.trace_id!;
    await poll(async () => {
      const r = await stack.api.request<{ spans: unknown[] }>('GET', `/api/agent-server/traces/${traceId}`);
      return r.status === 200 && r.body.data.spans.length > 3 ? true : undefined;
    }, 'the turn’s spans to be stored');

    const pages = [
      {
        name: 'playground',
        path: `/playground?agent=${agent.id}&conversation=${encodeURIComponent(run.conversation_id)}`,
        ready: (p: Page) => p.getByText('The order shipped on Tuesday').first().waitFor(),
      },
      {
        name: 'trace-view',
        path: `/traces/${traceId}`,
        ready: (p: Page) => p.getByText('Click a span').waitFor(),
      },
      { name: 'usage', path: '/usage', ready: (p: Page) => p.getByText('Cost').first().waitFor() },
    ];
    for (const shot of pages) {
      const page = await world.open(shot.path);
      for (const scheme of SCHEMES) {
        const file = await shoot(page, shot.name, scheme);
        await shot.ready(page);
        // No spinner in the picture: every request of the page answered.
        await page.waitForLoadState('networkidle');
        await save(page, file);
      }
      await page.close();
    }
    expect(world.problems()).toEqual([]);
  });
});
