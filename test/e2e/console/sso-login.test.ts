/**
 * Single sign-on through the console in Chromium, against a real OpenID
 * provider (oidc-provider and its own login form): the sign-in page's
 * button (labelled by OIDC_BUTTON_LABEL) leads to the provider, and the
 * person comes back to the page they opened, signed in under their name.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../core/db/knex.js';
import {
  SSO_CLIENT_ID,
  SSO_CLIENT_SECRET,
  startLoginProvider,
  type LoginProvider,
} from '../../fixtures/oidc-login-provider.js';
import { noBrowser, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { uniqueName } from '../../helpers/factories.js';
import { freePort } from '../../helpers/ports.js';
import { databaseUrl, noTemporal } from '../../helpers/services.js';
import { createTestUser } from '../../helpers/users.js';

const BUTTON = 'Sign in with Example Corp';

describe.skipIf(noTemporal() || noBrowser())('single sign-on in the console', () => {
  let provider: LoginProvider;
  let stack: ConsoleStack;
  let db: Db;

  beforeAll(async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    provider = await startLoginProvider([`${base}/api/agent-server/auth/oidc/callback`]);
    db = createDb(databaseUrl());
    // An owner exists already: the sign-in page, not the first owner's setup form.
    await createTestUser(db, { orgRole: 'owner' });
    stack = await startConsoleStack({
      AUTH_MODE: 'users',
      PORT: String(port),
      PUBLIC_URL: base,
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: SSO_CLIENT_ID,
      OIDC_CLIENT_SECRET: SSO_CLIENT_SECRET,
      OIDC_BUTTON_LABEL: BUTTON,
    });
  });
  afterAll(async () => {
    await stack?.close();
    await db?.destroy();
    await provider?.close();
  });

  /** The provider's own form: any login, any password; the login is the subject. */
  async function signInAtProvider(page: Page, login: string): Promise<void> {
    await page.waitForURL((url) => url.href.startsWith(provider.issuer));
    await page.getByPlaceholder('Enter any login').fill(login);
    await page.getByPlaceholder('and password').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
  }

  it('signs in with the identity provider and comes back to the page opened, signed in', async () => {
    const login = uniqueName('erin');
    provider.accounts.set(login, {
      name: 'Erin Example',
      email: `${login}@example.test`,
      email_verified: true,
    });
    const page = await stack.open('/approvals');

    await page.getByRole('link', { name: BUTTON }).click();
    await signInAtProvider(page, login);

    await page.waitForURL(`${stack.api.url}/console/approvals`);
    await expect.poll(() => page.getByText('Erin Example').count()).toBeGreaterThan(0);
    await stack.screenshot(page, 'sso-signed-in');

    // The session is the browser's: a reload keeps the person signed in.
    await page.reload();
    await expect.poll(() => page.getByText('Erin Example').count()).toBeGreaterThan(0);
    expect(await page.getByRole('link', { name: BUTTON }).count()).toBe(0);
    // Before signing in the console's session check answers 401: the browser logs that. The
    // provider's own page (its web font, its favicon) is not the console's.
    const providerPage = (e: string) => e.includes(provider.issuer) || e.includes('fonts.googleapis.com');
    expect(stack.errors.filter((e) => !/status of 401/.test(e) && !providerPage(e))).toEqual([]);
  });

  it('shows why on the sign-in page when the account is deactivated', async () => {
    const login = uniqueName('frank');
    provider.accounts.set(login, { name: 'Frank Example' });
    await db('users').insert({
      user_name: login,
      oidc_issuer: provider.issuer,
      oidc_subject: login,
      active: false,
    });
    const page = await stack.open('/');
    await page.getByRole('link', { name: BUTTON }).click();
    await signInAtProvider(page, login);
    await page.waitForURL((url) => url.pathname === '/console/login');
    await page.getByText('Your account is deactivated.').waitFor();
    expect(await page.getByText('Frank Example').count()).toBe(0);
    await expect.poll(() => page.getByRole('link', { name: BUTTON }).count()).toBe(1);
  });
});
