/**
 * The console's Evals page in a real browser against a real stack: an eval
 * started from a session's page (its agent and conversation chosen), the
 * API's field error shown under the variant's field, then the eval watched
 * to its end with the original and each variant's answers side by side.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noBrowser, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { noTemporal } from '../../helpers/services.js';
import { consoleWorld, type ConsoleWorld } from './console-world.js';
import { describedBy } from './form-helpers.js';

describe.skipIf(noTemporal() || noBrowser())('console: evals', () => {
  let stack: ConsoleStack;
  let world: ConsoleWorld;

  beforeAll(async () => {
    stack = await startConsoleStack();
    world = await consoleWorld(stack);
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('starts an eval from a session, shows field errors, and compares the answers side by side', async () => {
    stack.vendor.reset();
    const agent = await world.agent();
    const run = await world.converse({ agent_id: agent.id, message: 'What is the capital of France?' });
    expect(run.status).toBe('completed');

    const page = await world.open(`/sessions/${encodeURIComponent(run.conversation_id)}`);
    page.setDefaultTimeout(15_000);
    await page.getByRole('link', { name: 'Evaluate a change on this conversation' }).click();
    const dialog = page.getByRole('dialog', { name: 'New eval' });
    await dialog.waitFor();
    // The conversation came chosen.
    await dialog.getByText(run.conversation_id).first().waitFor();

    const candidate = dialog.getByRole('group', { name: 'Variant 2' });
    await candidate.getByLabel('Prompt version').fill('9');
    await dialog.getByRole('button', { name: 'Start eval' }).click();
    const version = candidate.getByLabel('Prompt version');
    await expect.poll(() => version.getAttribute('aria-invalid')).toBe('true');
    expect(await describedBy(version)).toMatch(/has no version 9/);

    await version.fill('1');
    await candidate.getByLabel('Temperature').fill('0.3');
    await dialog.getByRole('button', { name: 'Start eval' }).click();
    await page.waitForURL(/\/console\/evals\/[0-9a-f-]{36}$/);
    const evalId = page.url().split('/').at(-1)!;

    await page.getByText('2 of 2 turns').waitFor({ timeout: 30_000 });
    await page.getByText('completed', { exact: true }).first().waitFor();
    const totals = page.getByRole('table', { name: 'Totals' });
    await totals.getByRole('row', { name: /current/ }).waitFor();
    await totals.getByRole('row', { name: /candidate/ }).waitFor();
    const turn = page.getByRole('group', { name: `Turn 1 of ${run.conversation_id}` });
    await turn.getByText('What is the capital of France?').waitFor();
    const original = turn.getByRole('region', { name: 'Original' });
    const answer = run.output!.content;
    await original.getByText(answer).waitFor();
    const variant = turn.getByRole('region', { name: 'candidate' });
    await variant.getByText(answer).waitFor();
    await variant.getByText('exact match').waitFor();

    const ev = await stack.api.request<{ status: string; variants: Array<{ parameters: unknown }> }>(
      'GET',
      `/api/agent-server/evals/${evalId}`,
    );
    expect(ev.body.data.status).toBe('completed');
    expect(ev.body.data.variants[1]!.parameters).toEqual({ temperature: 0.3 });
    // The only failed request is the refused start (the field error above).
    expect(
      world.problems().filter((p) => !/400 .*\/api\/agent-server\/evals/.test(p) && !/status of 400/.test(p)),
    ).toEqual([]);

    // The eval is listed.
    await page.getByRole('link', { name: '← Evals' }).click();
    await page
      .getByRole('table', { name: 'Evals' })
      .getByRole('link', { name: evalId.slice(0, 8) })
      .waitFor();
  });
});
