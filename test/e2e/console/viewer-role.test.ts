/**
 * Users mode in the console: a viewer signs in through the login form and
 * sees the project's agents without New, Edit or Delete (nor the
 * organisation's pages); an organisation admin signing in the same way sees
 * them. The users and their passwords are written straight to the database.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../../core/auth/passwords.js';
import { noBrowser, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { uniqueName } from '../../helpers/factories.js';
import { db, insertAgent } from '../../helpers/factories/content.js';
import { noTemporal } from '../../helpers/services.js';
import { createTestUser } from '../../helpers/users.js';

const ADMIN_TOKEN = 'viewer-role-admin-token-0123456789';
const PASSWORD = 'a-password-long-enough';

describe.skipIf(noTemporal() || noBrowser())('the console in users mode', () => {
  let stack: ConsoleStack;
  let projectId: string;
  let agent: { id: string; name: string };
  let viewer: string;
  let admin: string;

  /** A user with a password, as the users API would make one. */
  async function userWithPassword(opts: Parameters<typeof createTestUser>[1]): Promise<string> {
    const user = await createTestUser(db(stack.api), opts);
    await db(stack.api)('users')
      .where({ id: user.id })
      .update({ password_hash: await hashPassword(PASSWORD) });
    return user.userName;
  }

  beforeAll(async () => {
    stack = await startConsoleStack({ AUTH_MODE: 'users', ADMIN_TOKEN });
    const asOwner = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const project = await stack.api.request<{ id: string }>(
      'POST',
      '/api/agent-server/projects',
      { name: uniqueName('project') },
      asOwner,
    );
    projectId = project.body.data.id;
    const prompt = await stack.api.request<{ id: string }>(
      'POST',
      `/api/agent-server/prompts?project_id=${projectId}`,
      { name: uniqueName('prompt'), template: 'You are helpful.', commit_message: 'first' },
      asOwner,
    );
    agent = await insertAgent(stack.api, projectId, { prompt_id: prompt.body.data.id });
    viewer = await userWithPassword({ projects: { [projectId]: 'viewer' } });
    admin = await userWithPassword({ orgRole: 'admin' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  /** Signs in through the login form on the agents tab, with this test's project chosen. */
  async function signIn(userName: string): Promise<Page> {
    const page = await stack.open('/config/agents');
    await page.evaluate((id) => localStorage.setItem('agent-server.project', id), projectId);
    const form = page.getByRole('form', { name: 'Sign in with a password' });
    await form.getByLabel('User name').fill(userName);
    await form.locator('input[type="password"]').fill(PASSWORD);
    await form.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('cell', { name: agent.name }).first().waitFor();
    expect(await page.getByTestId('signed-in-user').textContent()).toBe(userName);
    return page;
  }

  it('shows a viewer the agents without New, Edit or Delete, and no organisation pages', async () => {
    const page = await signIn(viewer);
    await stack.screenshot(page, 'viewer-agents');
    expect(await page.getByRole('button', { name: /^Delete/ }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Edit/ }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'New agent' }).count()).toBe(0);
    const tabs = page.getByRole('tablist', { name: 'Configuration' });
    expect(await tabs.getByRole('tab', { name: 'Providers' }).count()).toBe(0);
    const nav = page.getByRole('navigation', { name: 'Pages' });
    expect(await nav.getByRole('link', { name: 'Users' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'Audit log' }).count()).toBe(0);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('form', { name: 'Sign in with a password' }).waitFor();
  });

  it('shows an organisation admin Delete, Edit and New on the same page', async () => {
    const page = await signIn(admin);
    await page.getByRole('button', { name: `Delete ${agent.name}` }).waitFor();
    expect(await page.getByRole('button', { name: `Edit ${agent.name}` }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'New agent' }).count()).toBe(1);
    const nav = page.getByRole('navigation', { name: 'Pages' });

    // The organisation's pages, against the real API: the viewer among the users, a token's
    // secret shown once, the sign-ins in the audit log.
    await nav.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('table', { name: 'Users' }).getByText(viewer, { exact: true }).waitFor();
    await nav.getByRole('link', { name: 'API tokens' }).click();
    await page.getByRole('button', { name: 'New token' }).click();
    const dialog = page.getByRole('dialog', { name: 'New API token' });
    await dialog.getByLabel('Name').fill('ci job');
    await dialog.getByRole('button', { name: 'Create token' }).click();
    expect(await page.getByTestId('issued-token').textContent()).toMatch(/^\S{20,}$/);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByRole('table', { name: 'API tokens' }).getByText('ci job').waitFor();
    await nav.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('table', { name: 'Audit events' }).getByText(admin).first().waitFor();
    await stack.screenshot(page, 'audit-log');
  });
});
