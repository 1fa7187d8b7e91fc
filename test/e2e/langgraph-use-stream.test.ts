/**
 * The Agent Protocol door as a browser front end uses it: a React page on the
 * LangGraph SDK's `useStream` (test/fixtures/use-stream-page, built with Vite
 * like the console) served from another origin than the API, allowed by
 * AGENT_PROTOCOL_CORS_ORIGINS, in Debian's Chromium driven by playwright-core,
 * against the real stack (Temporal, a worker, Postgres, a real MCP server)
 * with the scripted vendor.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnTied } from '../../scripts/lib/children.js';
import { startEverythingServer, type RunningMcp } from '../fixtures/mcp-servers.js';
import { CHROMIUM, noBrowser } from '../helpers/browser.js';
import { uniqueName } from '../helpers/factories.js';
import { freePort } from '../helpers/ports.js';
import { useSessionWorld } from '../integration/sessions/session-harness.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PAGE_SOURCES = path.join(ROOT, 'test/fixtures/use-stream-page');
// Outside the clone: the built bundle must not be linted or formatted with the sources.
const BUILDS = path.join(os.tmpdir(), 'agent-server-use-stream-page');

/** Builds the page once per content (sources and the versions it is built from); returns its folder. */
async function buildPage(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of (await readdir(PAGE_SOURCES)).sort())
    hash.update(file).update(await readFile(path.join(PAGE_SOURCES, file)));
  const require = createRequire(import.meta.url);
  for (const pkg of ['@langchain/langgraph-sdk', 'react', 'react-dom', 'vite'])
    hash.update(`${pkg}@${(require(`${pkg}/package.json`) as { version: string }).version}`);
  const out = path.join(BUILDS, hash.digest('hex').slice(0, 16));
  if (existsSync(path.join(out, 'index.html'))) return out;
  await rm(BUILDS, { recursive: true, force: true });
  const vite = path.join(ROOT, 'node_modules/vite/bin/vite.js');
  const config = path.join(PAGE_SOURCES, 'vite.config.ts');
  // React's development build: it prints a duplicate key as a console error, which the tests refuse.
  const tied = spawnTied(process.execPath, [vite, 'build', '--config', config, '--outDir', out], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'development' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  tied.child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  tied.child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const { code, error } = await tied.exited;
  if (error || code !== 0) throw new Error(`building the useStream page failed (${code}): ${output}`);
  return out;
}

const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };

/** The built page on its own origin (`http://localhost:<port>`: not the API's `127.0.0.1:<port>`). */
async function servePage(folder: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    const file = path.join(folder, pathname === '/' ? 'index.html' : pathname);
    if (!file.startsWith(folder + path.sep)) return void res.writeHead(404).end();
    readFile(file).then(
      (body) =>
        res
          .writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' })
          .end(body),
      () => res.writeHead(404).end(),
    );
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

interface Shown {
  type: string;
  id: string;
  content: string;
  toolCalls: Array<{ name: string; id: string; text: string }>;
}

/** The messages the page shows, read from its DOM. */
async function shownMessages(page: Page): Promise<Shown[]> {
  const shown: Shown[] = [];
  for (const li of await page.getByTestId('message').all()) {
    const toolCalls = [];
    for (const call of await li.getByTestId('tool-call').all())
      toolCalls.push({
        name: (await call.getAttribute('data-name')) ?? '',
        id: (await call.getAttribute('data-id')) ?? '',
        text: (await call.textContent()) ?? '',
      });
    shown.push({
      type: (await li.getAttribute('data-type')) ?? '',
      id: (await li.getAttribute('data-id')) ?? '',
      content: (await li.getByTestId('message-content').textContent()) ?? '',
      toolCalls,
    });
  }
  return shown;
}

interface Snapshot {
  loading: boolean;
  messages: Array<{ type: string; id: string | undefined; text: string }>;
}
/** What each render of the page showed (the page records them; no DOM types here). */
const snapshots = (page: Page) =>
  page.evaluate(() => (globalThis as unknown as { __snapshots: Snapshot[] }).__snapshots);

/** Waits until the page is idle with `text` as its last message. */
async function waitForAnswer(page: Page, text: string): Promise<void> {
  await expect
    .poll(
      async () => [
        await page.getByTestId('loading').textContent(),
        (await page.getByTestId('message-content').allTextContents()).at(-1),
      ],
      { timeout: 30_000 },
    )
    .toEqual(['false', text]);
}

const skip = noBrowser();
// The page's origin must be known before the API starts, to be listed in its CORS setting.
const pagePort = skip ? 0 : await freePort();
const PAGE_ORIGIN = `http://localhost:${pagePort}`;
/** The same page on an origin that is not listed. */
const otherPort = skip ? 0 : await freePort();
const OTHER_ORIGIN = `http://localhost:${otherPort}`;

describe.skipIf(skip)('useStream in a browser page on another origin', () => {
  const world = useSessionWorld({ AGENT_PROTOCOL_CORS_ORIGINS: PAGE_ORIGIN });
  let pageServer: Server;
  let otherServer: Server;
  let browser: Browser;
  let everything: RunningMcp;
  let mcpServerId: string;
  let apiUrl: string;

  beforeAll(async () => {
    const [folder, mcp] = await Promise.all([buildPage(), startEverythingServer('streamableHttp')]);
    everything = mcp;
    pageServer = await servePage(folder, pagePort);
    otherServer = await servePage(folder, otherPort);
    browser = await chromium.launch({
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
    apiUrl = `${world.fx.api.url}/api/langgraph/${world.fx.projectId}`;
    const server = await world.fx.api.request<{ id: string }>(
      'POST',
      `/api/agent-server/mcp-servers?project_id=${world.fx.projectId}`,
      { name: uniqueName('mcp'), endpoint: everything.url },
    );
    if (server.status !== 200) throw new Error(`mcp server create failed: ${server.text}`);
    mcpServerId = server.body.data.id;
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    pageServer?.close();
    otherServer?.close();
    await everything?.stop();
  });

  /**
   * The page at its own origin, for an assistant (and a thread, else the page creates one);
   * what its console printed as errors, and uncaught errors, go to `errors`.
   */
  async function open(
    assistantId: string,
    threadId?: string,
    origin = PAGE_ORIGIN,
  ): Promise<{ page: Page; errors: string[] }> {
    const errors: string[] = [];
    const page = await (await browser.newContext()).newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`${m.text()} (${m.location().url})`);
    });
    page.on('pageerror', (e) => errors.push(e.message));
    const query = new URLSearchParams({ apiUrl, assistantId, ...(threadId ? { threadId } : {}) });
    await page.goto(`${origin}/?${query.toString()}`);
    return { page, errors };
  }

  async function send(page: Page, text: string): Promise<void> {
    await page.getByTestId('input').fill(text);
    await page.getByTestId('send').click();
  }

  it('streams a turn with a tool call: human, AI with its call, tool result, the answer in pieces, each once', async () => {
    const agent = await world.fx.agent({
      mcp_servers: [{ mcp_server_id: mcpServerId, tool_filters: ['echo'] }],
    });
    const answer = 'The echo tool said hello from the page, and that is all.';
    world.fx.vendor.script(
      { reply: { tool_calls: [{ name: 'echo', arguments: { message: 'hello from the page' } }] } },
      { reply: { text: answer }, chunkDelayMs: 40 },
    );
    const client = new Client({ apiUrl });
    const thread = await client.threads.create();
    const { page, errors } = await open(agent.id, thread.thread_id);
    await expect.poll(() => page.getByTestId('loading').textContent()).toBe('false');
    await send(page, 'Echo hello please');
    await waitForAnswer(page, answer);

    const shown = await shownMessages(page);
    expect(shown.map((m) => m.type)).toEqual(['human', 'ai', 'tool', 'ai']);
    expect(shown[0]!.content).toBe('Echo hello please');
    expect(shown[1]!.toolCalls).toHaveLength(1);
    expect(shown[1]!.toolCalls[0]).toMatchObject({ name: 'echo' });
    expect(shown[1]!.toolCalls[0]!.text).toContain('"message":"hello from the page"');
    expect(shown[2]!.content).toContain('hello from the page');
    expect(shown[3]!.content).toBe(answer);
    // Each message once: chunks and the stored state were merged by id, not appended.
    expect(new Set(shown.map((m) => m.id)).size).toBe(4);
    expect(shown.every((m) => m.id !== '')).toBe(true);

    // It was loading while the answer came in pieces, and is not now.
    const seen = await snapshots(page);
    const partial = seen.filter((s) => {
      const last = s.messages.at(-1);
      return (
        s.loading &&
        last?.type === 'ai' &&
        last.text !== '' &&
        last.text !== answer &&
        answer.startsWith(last.text)
      );
    });
    expect(partial.length).toBeGreaterThan(0);
    expect(seen.at(-1)!.loading).toBe(false);
    // No render ever showed a message twice.
    expect(seen.filter((s) => new Set(s.messages.map((m) => m.id)).size !== s.messages.length)).toEqual([]);

    // The thread stored what the page showed, with the same ids; a reload shows it again.
    const stored = (await client.threads.getState(thread.thread_id)).values as {
      messages: Array<{ id: string }>;
    };
    expect(stored.messages.map((m) => m.id)).toEqual(shown.map((m) => m.id));
    await page.reload();
    await expect
      .poll(async () => (await shownMessages(page)).map((m) => m.id))
      .toEqual(shown.map((m) => m.id));
    expect(errors).toEqual([]);
  });

  it('an approval pause shows as the interrupt; approving from the page resumes the turn', async () => {
    const agent = await world.fx.agent({
      mcp_servers: [
        { mcp_server_id: mcpServerId, tool_filters: ['echo'], tools_requiring_approval: ['echo'] },
      ],
    });
    world.fx.vendor.script(
      { reply: { tool_calls: [{ name: 'echo', arguments: { message: 'approved from the browser' } }] } },
      { reply: { text: 'Echoed after your approval.' }, chunkDelayMs: 20 },
    );
    // No thread id: the page's first submit creates the thread (a cross-origin POST /threads).
    const { page, errors } = await open(agent.id);
    await send(page, 'Echo something, with approval');
    await page.getByTestId('interrupt').waitFor({ timeout: 30_000 });
    await expect.poll(() => page.getByTestId('loading').textContent()).toBe('false');
    const value = JSON.parse((await page.getByTestId('interrupt-value').textContent())!) as Record<
      string,
      unknown
    >;
    expect(value).toMatchObject({
      actionRequests: [{ name: 'echo', args: { message: 'approved from the browser' } }],
      reviewConfigs: [{ actionName: 'echo', allowedDecisions: ['approve', 'reject'] }],
    });
    expect((await shownMessages(page)).map((m) => m.type)).toEqual(['human', 'ai']);
    const threadId = await page.getByTestId('thread-id').textContent();
    expect(threadId).toMatch(/^[0-9a-f-]{36}$/);

    await page.getByTestId('approve').click();
    await waitForAnswer(page, 'Echoed after your approval.');
    const shown = await shownMessages(page);
    expect(shown.map((m) => m.type)).toEqual(['human', 'ai', 'tool', 'ai']);
    expect(shown[2]!.content).toContain('approved from the browser');
    expect(new Set(shown.map((m) => m.id)).size).toBe(4);
    await expect.poll(() => page.getByTestId('interrupt').count()).toBe(0);
    const thread = await new Client({ apiUrl }).threads.get(threadId!);
    expect(thread.status).toBe('idle');
    expect(errors).toEqual([]);
  });

  it('a page on an origin that is not listed is refused by the browser: an error, and no run', async () => {
    const agent = await world.fx.agent();
    const client = new Client({ apiUrl });
    const thread = await client.threads.create();
    const { page, errors } = await open(agent.id, thread.thread_id, OTHER_ORIGIN);
    await send(page, 'Anyone there?');
    await page.getByTestId('error').waitFor({ timeout: 30_000 });
    expect(errors.some((e) => /CORS|Access-Control-Allow-Origin/.test(e))).toBe(true);
    expect(await client.runs.list(thread.thread_id)).toEqual([]);
    expect(world.fx.vendor.received).toHaveLength(0);
  });
});
