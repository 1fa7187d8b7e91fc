/**
 * Forking from the session view in a real browser against the real stack:
 * "Fork from here" on a message opens a new conversation whose transcript
 * ends at that message, and the original keeps all of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noBrowser, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { noTemporal } from '../../helpers/services.js';
import { consoleWorld, type ConsoleWorld } from './console-world.js';

describe.skipIf(noTemporal() || noBrowser())('console: fork a conversation from a message', () => {
  let stack: ConsoleStack;
  let world: ConsoleWorld;

  beforeAll(async () => {
    stack = await startConsoleStack();
    world = await consoleWorld(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('"Fork from here" opens a new conversation holding the transcript up to that message', async () => {
    const agent = await world.agent();
    stack.vendor.script({ reply: { text: 'First answer' } }, { reply: { text: 'Second answer' } });
    const first = await world.converse({ agent_id: agent.id, message: 'First question' });
    await world.converse({
      agent_id: agent.id,
      conversation_id: first.conversation_id,
      message: 'Second question',
    });

    const page = await world.open(`/sessions/${first.conversation_id}`);
    const answer = page.getByLabel('assistant message').filter({ hasText: 'First answer' });
    await answer.waitFor();
    await answer.getByRole('button', { name: 'Fork from here' }).click();

    // The new conversation's page, not the original's.
    await page.waitForURL(
      (url) => url.pathname.startsWith('/console/sessions/') && !url.pathname.endsWith(first.conversation_id),
    );
    // The new page's transcript may still be loading right after the URL changes.
    await page.getByLabel('assistant message').filter({ hasText: 'First answer' }).waitFor();
    await expect
      .poll(async () => (await page.getByLabel('user message').allInnerTexts()).length, { timeout: 15_000 })
      .toBe(1);
    expect(await page.getByText('Second answer').count()).toBe(0);

    const forkId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    const original = await stack.api.request<Array<{ id: string }>>(
      'GET',
      `/api/agent-server/conversations?project_id=${world.projectId}`,
    );
    expect(original.body.data.map((c) => c.id).sort()).toEqual([first.conversation_id, forkId].sort());
    expect(world.problems()).toEqual([]);
  });
});
