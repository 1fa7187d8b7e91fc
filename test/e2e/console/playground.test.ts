/**
 * The playground in a real browser against a real stack: an agent with an MCP
 * tool that needs approval, a scripted model that streams text and calls it;
 * the reply streams in, the call waits for the Approve button, the run ends
 * with its tokens and cost; leaving mid-answer (another page, a reload) and
 * coming back resumes the stream without repeating text.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noBrowser, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { createProject, uniqueName } from '../../helpers/factories.js';
import { createModel, createProvider } from '../../helpers/factories/config.js';
import { createPrompt } from '../../helpers/factories/content.js';
import { noTemporal } from '../../helpers/services.js';
import { startAuthenticatedMcpServer, type RunningMcp } from '../../fixtures/mcp-servers.js';

const TIMEOUT = { timeout: 30_000 };
const REPO = path.resolve(import.meta.dirname, '../../..');
/** The process sandbox backend (no Docker needed): commands run as local child processes. */
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'console-playground-'));

describe.skipIf(noTemporal() || noBrowser())('the playground', () => {
  let stack: ConsoleStack;
  let mcp: RunningMcp;
  let projectId: string;
  let modelId: string;

  async function post<T>(path: string, body: Record<string, unknown>): Promise<T> {
    const res = await stack.api.request<T>('POST', path, body);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res.body.data;
  }

  beforeAll(async () => {
    execFileSync(process.execPath, [path.join(REPO, 'sandbox-daemon/bundle.mjs')], { stdio: 'ignore' });
    [stack, mcp] = await Promise.all([
      startConsoleStack({
        SANDBOX_ENABLED: 'true',
        SANDBOX_BACKEND: 'process',
        DATA_DIR: dataDir,
        SANDBOX_IDLE_TIMEOUT_MS: '5000',
      }),
      startAuthenticatedMcpServer({ token: 'tok-pg', tenant: 'acme' }),
    ]);
    projectId = (await createProject(stack.api)).id;
    const provider = await createProvider(stack.api, { base_url: `${stack.vendor.url}/v1` });
    modelId = (
      await createModel(stack.api, projectId, {
        provider_id: provider.id,
        pricing: { input_per_million_usd: 1000, output_per_million_usd: 2000 },
      })
    ).id;
  }, 120_000);
  afterAll(async () => {
    await mcp?.stop();
    await stack?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  /** The n-th turn of the transcript. */
  const turn = (page: Page, n: number) => page.getByRole('article', { name: `Turn ${n}` });
  /** Every assistant text of a turn, joined: what a reader sees of its answer. */
  const answer = async (page: Page, n: number) =>
    (await turn(page, n).getByTestId('assistant-text').allInnerTexts()).join('|');

  async function sendMessage(page: Page, text: string) {
    await page.getByRole('textbox', { name: 'Message' }).fill(text);
    await page.getByRole('button', { name: 'Send' }).click();
  }

  it('streams the reply, shows the tool call, approves it, and resumes after leaving without repeating text', async () => {
    const prompt = await createPrompt(stack.api, projectId, { template: 'You are {{role}}.' });
    const server = await post<{ id: string; name: string }>(
      `/api/agent-server/mcp-servers?project_id=${projectId}`,
      {
        name: uniqueName('mcp'),
        endpoint: mcp.url,
        headers: { Authorization: 'Bearer tok-pg', 'x-tenant': 'acme' },
      },
    );
    const agent = await post<{ id: string; name: string }>(
      `/api/agent-server/agents?project_id=${projectId}`,
      {
        name: uniqueName('agent'),
        model_id: modelId,
        prompt_id: prompt.id,
        mcp_servers: [
          { mcp_server_id: server.id, tool_filters: ['whoami'], tools_requiring_approval: ['whoami'] },
        ],
      },
    );
    const { vendor } = stack;
    vendor.script(
      {
        reply: {
          text: 'Let me check who you are.',
          tool_calls: [{ name: 'whoami', arguments: { greeting: 'hi' } }],
          usage: { input: 120, output: 30 },
        },
      },
      { reply: { text: 'You are the acme tenant.', usage: { input: 150, output: 8 } } },
    );

    const page = await stack.open(`/playground?agent=${agent.id}`);
    // Where each run's event stream was (re)opened from.
    const resumed: Array<{ run: string; lastEventId: string | undefined }> = [];
    page.on('request', (r) => {
      const m = /\/runs\/([^/]+)\/events/.exec(r.url());
      if (m) resumed.push({ run: m[1]!, lastEventId: r.headers()['last-event-id'] });
    });
    // The link preselects the agent; its prompt's variable gets an input.
    await expect
      .poll(() => page.getByRole('combobox', { name: 'Agent' }).inputValue(), TIMEOUT)
      .toBe(agent.name);
    await page.getByLabel('role', { exact: true }).fill('a helpful assistant');
    await sendMessage(page, 'Who am I?');

    // The tool call shows with its arguments and waits for a decision.
    const call = turn(page, 1).getByRole('region', { name: 'Tool call whoami' });
    await call.getByText('awaiting approval').waitFor(TIMEOUT);
    expect(await call.innerText()).toContain('"greeting": "hi"');
    expect(await answer(page, 1)).toBe('Let me check who you are.');
    expect(page.url()).toMatch(/conversation=playground-/);
    await expect.poll(() => vendor.received.length).toBe(1);
    expect(JSON.stringify(vendor.received[0]!.body.messages)).toContain('You are a helpful assistant.');
    await stack.screenshot(page, 'playground-approval');

    await call.getByRole('button', { name: 'Approve whoami' }).click();
    await turn(page, 1).getByText('completed', { exact: true }).waitFor(TIMEOUT);
    expect(await call.innerText()).toContain('hi acme');
    expect(await answer(page, 1)).toBe('Let me check who you are.|You are the acme tenant.');
    // Tokens, cost and latency of the turn.
    const stats = turn(page, 1).getByRole('group', { name: 'Turn statistics' });
    await stats.getByText('cost').waitFor(TIMEOUT);
    const statsText = await stats.innerText();
    expect(statsText).toMatch(/tokens in\s+270/);
    expect(statsText).toMatch(/tokens out\s+38/);
    expect(statsText).toMatch(/cost\s+\$0\.3460/);
    expect(statsText).toMatch(/latency\s+[\d.]+ (ms|s)/);
    // The server's figures: the first output (the streamed text), the time the call waited for Approve.
    expect(statsText).toMatch(/first token\s+[\d.]+ (ms|s)/);
    expect(statsText).toMatch(/waiting for approval\s+[\d.]+ (ms|s)/);
    expect(statsText).toContain(`${prompt.name} v1`);

    // Turn 2: leave for another page mid-answer, come back through the navigation.
    vendor.reset();
    vendor.script({ reply: { text: 'The second answer streams in several pieces.' }, hold: true });
    await sendMessage(page, 'And again?');
    await vendor.whenHeld();
    await expect.poll(() => answer(page, 2), TIMEOUT).toBe('The ');
    const nav = page.getByRole('navigation', { name: 'Pages' });
    const before = resumed.length;
    await nav.getByRole('link', { name: 'Sessions' }).click();
    await page.waitForURL(/\/console\/sessions/);
    await nav.getByRole('link', { name: 'Playground' }).click();
    await turn(page, 2).waitFor(TIMEOUT);
    expect(page.url()).toMatch(/conversation=playground-/);
    vendor.release();
    await turn(page, 2).getByText('completed', { exact: true }).waitFor(TIMEOUT);
    expect(await answer(page, 2)).toBe('The second answer streams in several pieces.');
    // Back on the page, the stream went on from the last event it held, not from the start.
    expect(resumed.slice(before).some((r) => Number(r.lastEventId) >= 2)).toBe(true);

    // Turn 3: reload mid-answer.
    vendor.reset();
    vendor.script({ reply: { text: 'A third answer, resumed after a reload.' }, hold: true });
    await sendMessage(page, 'Once more');
    await vendor.whenHeld();
    await expect.poll(() => answer(page, 3), TIMEOUT).toBe('A ');
    await page.reload();
    await turn(page, 3).waitFor(TIMEOUT);
    vendor.release();
    await turn(page, 3).getByText('completed', { exact: true }).waitFor(TIMEOUT);

    // The whole transcript, each text once.
    expect(await answer(page, 1)).toBe('Let me check who you are.|You are the acme tenant.');
    expect(await answer(page, 2)).toBe('The second answer streams in several pieces.');
    expect(await answer(page, 3)).toBe('A third answer, resumed after a reload.');
    expect(await page.getByTestId('user-text').allInnerTexts()).toEqual([
      'Who am I?',
      'And again?',
      'Once more',
    ]);
    expect(await turn(page, 1).getByRole('region', { name: 'Tool call whoami' }).innerText()).toContain(
      'hi acme',
    );
    await stack.screenshot(page, 'playground');
    expect(stack.errors).toEqual([]);
  }, 120_000);

  it("renders structured output validated against the agent's schema; a linked prompt version runs once its label moves", async () => {
    // v1 carries `production` (the agent's label), v2 only `latest`.
    const prompt = await createPrompt(stack.api, projectId, {
      template: 'Answer in JSON.',
      label: 'production',
    });
    await post(`/api/agent-server/prompts/${prompt.name}/versions?project_id=${projectId}`, {
      template: 'Answer in JSON, briefly.',
      commit_message: 'shorter',
    });
    const schema = await post<{ id: string; name: string }>(
      `/api/agent-server/schemas?project_id=${projectId}`,
      {
        name: uniqueName('answer'),
        schema: {
          type: 'object',
          properties: { answer: { type: 'number' }, unit: { type: 'string' } },
          required: ['answer', 'unit'],
          additionalProperties: false,
        },
      },
    );
    const agent = await post<{ id: string }>(`/api/agent-server/agents?project_id=${projectId}`, {
      name: uniqueName('agent'),
      model_id: modelId,
      prompt_id: prompt.id,
      prompt_label: 'production',
      schema_id: schema.id,
    });
    stack.vendor.reset();
    stack.vendor.script(
      { reply: { text: '{"answer": 42, "unit": "meters"}' } },
      { reply: { text: '{"answer": 7, "unit": "feet"}' } },
    );

    // "Open this version in the playground" (the Prompts page's link): v2, while `production` is on v1.
    const page = await stack.open(`/playground?agent=${agent.id}&prompt=${prompt.name}&version=2`);
    await page.getByText(`You opened v2 of ${prompt.name}`).waitFor(TIMEOUT);
    await sendMessage(page, 'How far?');
    const out = turn(page, 1).getByRole('region', { name: 'Structured output' });
    await out.waitFor(TIMEOUT);
    await out.getByText(`valid against ${schema.name}`).waitFor();
    expect((await out.getByRole('row').allInnerTexts()).sort()).toEqual(['answer\t42', 'unit\tmeters']);
    await turn(page, 1).getByText(`${prompt.name} v1`).waitFor(TIMEOUT);
    await stack.screenshot(page, 'playground-structured');

    // The label moves to v2: the page says so, and the next turn runs v2.
    const moved = await stack.api.request(
      'PATCH',
      `/api/agent-server/prompts/${prompt.name}/versions/2?project_id=${projectId}`,
      {
        label: 'production',
      },
    );
    expect(moved.status).toBe(200);
    await page.reload();
    await page.getByText('The agent runs v2, the version you opened.').waitFor(TIMEOUT);
    await sendMessage(page, 'And now?');
    await turn(page, 2).getByText(`${prompt.name} v2`).waitFor(TIMEOUT);
    expect(await turn(page, 1).getByText(`${prompt.name} v1`).count()).toBe(1);
    expect(JSON.stringify(stack.vendor.received[1]!.body.messages)).toContain('Answer in JSON, briefly.');
    expect(stack.errors).toEqual([]);
  }, 60_000);

  it("shows the run's warnings on its turn: a template variable not given rendered empty", async () => {
    const prompt = await createPrompt(stack.api, projectId, { template: 'You help {{customer}}.' });
    const agent = await post<{ id: string }>(`/api/agent-server/agents?project_id=${projectId}`, {
      name: uniqueName('agent'),
      model_id: modelId,
      prompt_id: prompt.id,
    });
    stack.vendor.reset();
    stack.vendor.script({ reply: { text: 'Hello, whoever you are.' } });
    const page = await stack.open(`/playground?agent=${agent.id}`);
    await page.getByLabel('customer', { exact: true }).waitFor(TIMEOUT);
    await sendMessage(page, 'Hi');
    await turn(page, 1).getByText('completed', { exact: true }).waitFor(TIMEOUT);
    const warning = turn(page, 1).getByRole('alert').filter({ hasText: 'template variable "customer"' });
    await warning.waitFor(TIMEOUT);
    expect(await warning.innerText()).toContain('rendered empty');
    await stack.screenshot(page, 'playground-warning');
    expect(stack.errors).toEqual([]);
  }, 60_000);

  it('tries another prompt version and parameters in this conversation without moving the label, until reset', async () => {
    const prompt = await createPrompt(stack.api, projectId, { template: 'You are v1.', label: 'production' });
    await post(`/api/agent-server/prompts/${prompt.name}/versions?project_id=${projectId}`, {
      template: 'You are v2.',
      commit_message: 'second',
    });
    const agent = await post<{ id: string }>(`/api/agent-server/agents?project_id=${projectId}`, {
      name: uniqueName('agent'),
      model_id: modelId,
      prompt_id: prompt.id,
      prompt_label: 'production',
    });
    const { vendor } = stack;
    vendor.reset();
    vendor.script({ reply: { text: 'Tried.' } }, { reply: { text: 'As configured.' } });

    const page = await stack.open(`/playground?agent=${agent.id}`);
    await page.getByRole('button', { name: 'Try changes…' }).click();
    const panel = page.getByRole('region', { name: 'Try changes' });
    await panel.getByRole('combobox', { name: 'Prompt version' }).click();
    await page.getByRole('option', { name: new RegExp(`${prompt.name} v2`) }).click();
    await panel.getByRole('textbox', { name: 'temperature' }).fill('0.3');
    const banner = page.getByRole('status', { name: 'Trying changes' });
    await banner.getByText(`prompt ${prompt.name} v2 · temperature 0.3`).waitFor(TIMEOUT);
    await expect.poll(() => page.url()).toMatch(/try_prompt_version=.*try_params=/);
    await stack.screenshot(page, 'playground-try-changes');

    // Kept with the conversation: a reload still tries them.
    await page.reload();
    await banner.waitFor(TIMEOUT);
    await sendMessage(page, 'Which prompt?');
    await turn(page, 1).getByText('completed', { exact: true }).waitFor(TIMEOUT);
    expect(vendor.received[0]!.body).toMatchObject({ temperature: 0.3 });
    expect(JSON.stringify(vendor.received[0]!.body.messages)).toContain('You are v2.');
    const stats = turn(page, 1).getByRole('group', { name: 'Turn statistics' });
    await stats.getByText(`${prompt.name} v2`, { exact: true }).waitFor(TIMEOUT);
    expect(await stats.innerText()).toContain(`tried: prompt ${prompt.name} v2 · temperature 0.3`);
    // The label did not move.
    const versions = await stack.api.request<Array<{ version: number; labels: string[] }>>(
      'GET',
      `/api/agent-server/prompts/${prompt.name}/versions?project_id=${projectId}`,
    );
    expect(versions.body.data.find((v) => v.labels.includes('production'))?.version).toBe(1);

    // Reset: the next turn runs the agent as configured.
    await banner.getByRole('button', { name: 'Reset' }).click();
    await banner.waitFor({ state: 'detached' });
    expect(page.url()).not.toMatch(/try_/);
    await sendMessage(page, 'And now?');
    await turn(page, 2).getByText('completed', { exact: true }).waitFor(TIMEOUT);
    await turn(page, 2).getByText(`${prompt.name} v1`, { exact: true }).waitFor(TIMEOUT);
    expect(JSON.stringify(vendor.received[1]!.body.messages)).toContain('You are v1.');
    expect(vendor.received[1]!.body).not.toHaveProperty('temperature');
    expect(
      await turn(page, 2)
        .getByText(/^tried:/)
        .count(),
    ).toBe(0);
    expect(stack.errors).toEqual([]);
  }, 60_000);

  it('Stop cancels a running turn: the model call is aborted, the partial answer stays, the next turn goes on', async () => {
    const prompt = await createPrompt(stack.api, projectId, { template: 'You stream.' });
    const agent = await post<{ id: string }>(`/api/agent-server/agents?project_id=${projectId}`, {
      name: uniqueName('agent'),
      model_id: modelId,
      prompt_id: prompt.id,
    });
    const { vendor } = stack;
    vendor.reset();
    vendor.script({ reply: { text: 'A long answer that keeps going.' }, hold: true });
    const page = await stack.open(`/playground?agent=${agent.id}`);
    await expect.poll(() => page.getByRole('combobox', { name: 'Agent' }).inputValue(), TIMEOUT).not.toBe('');
    await sendMessage(page, 'Talk');
    await vendor.whenHeld();
    await expect.poll(() => answer(page, 1), TIMEOUT).toBe('A ');

    await turn(page, 1).getByRole('button', { name: 'Stop' }).click();
    await turn(page, 1).getByText('cancelled', { exact: true }).waitFor(TIMEOUT);
    expect(await turn(page, 1).getByLabel('Streaming').count()).toBe(0);
    expect(await turn(page, 1).getByRole('button', { name: 'Stop' }).count()).toBe(0);
    // The vendor saw its request go away; what streamed stays.
    await expect.poll(() => vendor.aborted, TIMEOUT).toBe(1);
    expect(await answer(page, 1)).toBe('A ');
    const conversation = new URL(page.url()).searchParams.get('conversation')!;
    const runs = await stack.api.request<Array<{ status: string; output: { content: string } | null }>>(
      'GET',
      `/api/agent-server/conversations/${conversation}/runs?project_id=${projectId}`,
    );
    expect(runs.body.data[0]).toMatchObject({ status: 'cancelled', output: { content: 'A ' } });
    await stack.screenshot(page, 'playground-cancelled');

    // The next message goes through, with the cut-off answer in its history.
    vendor.release();
    await sendMessage(page, 'Go on');
    await turn(page, 2).getByText('completed', { exact: true }).waitFor(TIMEOUT);
    expect(JSON.stringify(vendor.received.at(-1)!.body.messages)).toContain('A ');
    expect(stack.errors).toEqual([]);
  }, 60_000);

  it('shows a sandbox command with its stdout, stderr, exit code and duration', async () => {
    const prompt = await createPrompt(stack.api, projectId, { template: 'Use the sandbox.' });
    const agent = await post<{ id: string }>(`/api/agent-server/agents?project_id=${projectId}`, {
      name: uniqueName('agent'),
      model_id: modelId,
      prompt_id: prompt.id,
      sandbox: { enabled: true },
    });
    stack.vendor.reset();
    stack.vendor.script(
      {
        reply: {
          tool_calls: [
            {
              name: 'execute_bash_commands',
              arguments: { code: 'echo to-stdout; echo to-stderr >&2; exit 3' },
            },
          ],
        },
      },
      { reply: { text: 'The command failed with exit code 3.' } },
    );
    const page = await stack.open(`/playground?agent=${agent.id}`);
    await expect.poll(() => page.getByRole('combobox', { name: 'Agent' }).inputValue(), TIMEOUT).not.toBe('');
    await sendMessage(page, 'Run it');
    await turn(page, 1).getByText('completed', { exact: true }).waitFor(TIMEOUT);
    const call = turn(page, 1).getByRole('region', { name: 'Tool call execute_bash_commands' });
    const text = await call.innerText();
    expect(text).toContain('echo to-stdout; echo to-stderr >&2; exit 3');
    expect(text).toMatch(/stdout\s+to-stdout/);
    expect(text).toMatch(/stderr\s+to-stderr/);
    expect(text).toMatch(/exit code 3\s+(\d+ ms|[\d.]+ s)/i);
    expect(await answer(page, 1)).toBe('The command failed with exit code 3.');
    await stack.screenshot(page, 'playground-sandbox');
    expect(stack.errors).toEqual([]);
  }, 60_000);
});
