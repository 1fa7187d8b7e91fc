/**
 * The console in a real browser against a real stack: the API (serving
 * /console) and a worker in this process, the run's PostgreSQL and Temporal
 * dev server, a scripted OpenAI-format vendor, and Debian's Chromium driven
 * by playwright-core (browser downloads do not work on our machines).
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type ConsoleMessage, type Page } from 'playwright-core';
import { ensureConsoleBuilt } from '../../scripts/lib/console-build.js';
import { startTestApi, type TestApi } from './api.js';
import { startInProcessWorker, sessionEnv } from '../integration/sessions/session-harness.js';
import { startOpenAiVendor } from '../fixtures/vendors/openai.js';
import type { ScriptedVendor } from '../fixtures/vendors/scripted-server.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = path.resolve(import.meta.dirname, '../../test-results/console');

/** Skip reason on a laptop without Chromium; under CI the tests fail instead (no skipping). */
export function noBrowser(): boolean {
  if (existsSync(CHROMIUM)) return false;
  if (process.env.CI === 'true')
    throw new Error(`CI=true but no Chromium at ${CHROMIUM} (apt-get install chromium)`);
  console.warn(`SKIPPING console browser tests: no Chromium at ${CHROMIUM}`);
  return true;
}

export interface ConsoleStack {
  api: TestApi;
  vendor: ScriptedVendor;
  browser: Browser;
  /** A fresh page at `/console<path>`; console errors are collected into `errors`. */
  open(pathname: string): Promise<Page>;
  /** Errors the browser console printed, and uncaught page errors (a test asserts there are none). */
  errors: string[];
  /** Warnings the browser console printed (react-router's, say): a page that loads cleanly prints none. */
  warnings: string[];
  screenshot(page: Page, name: string): Promise<void>;
  close(): Promise<void>;
}

export async function startConsoleStack(env: Record<string, string> = {}): Promise<ConsoleStack> {
  await ensureConsoleBuilt();
  const shared = sessionEnv({ LOG_LEVEL: 'warn', ...env });
  const api = await startTestApi(shared);
  const worker = await startInProcessWorker(shared);
  const vendor = await startOpenAiVendor();
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const errors: string[] = [];
  const warnings: string[] = [];
  await mkdir(SCREENSHOTS, { recursive: true });
  return {
    api,
    vendor,
    browser,
    errors,
    warnings,
    async open(pathname) {
      const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
      const page = await context.newPage();
      page.on('console', (m: ConsoleMessage) => {
        // A failed fetch is printed with the page's address; its location names the resource.
        if (m.type() === 'error') errors.push(`${pathname}: ${m.text()} (${m.location().url})`);
        if (m.type() === 'warning') warnings.push(`${pathname}: ${m.text()}`);
      });
      page.on('pageerror', (e) => errors.push(`${pathname}: ${e.message}`));
      await page.goto(`${api.url}/console${pathname}`);
      return page;
    },
    async screenshot(page, name) {
      await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
    },
    async close() {
      await browser.close();
      await vendor.close();
      await worker.stop();
      await api.close();
    },
  };
}
