/**
 * Fixtures the sessions and traces console tests share: a project with a
 * priced model on the scripted vendor and agents, made through the REST API,
 * and a page opened with that project chosen.
 */
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import type { ConsoleStack } from '../../helpers/browser.js';
import { createProject, uniqueName } from '../../helpers/factories.js';
import { createModel, createProvider } from '../../helpers/factories/config.js';
import { createPrompt } from '../../helpers/factories/content.js';

export interface ConsoleWorld {
  projectId: string;
  modelId: string;
  agent(fields?: Record<string, unknown>): Promise<{ id: string; name: string }>;
  converse(body: Record<string, unknown>): Promise<RunView>;
  /** `/console<path>` with this world's project chosen in the project picker (kept in localStorage). */
  open(pathname: string): Promise<Page>;
  /**
   * Browser console errors, and every failed HTTP response of the pages opened
   * with `open` (URL and status), except Chromium's own /favicon.ico request:
   * the shell's index.html names no icon, so that 404 is logged on every first
   * page load as a bare "Failed to load resource" line without its URL.
   */
  problems(): string[];
}

export interface RunView {
  run_id: string;
  conversation_id: string;
  status: string;
  trace_id: string | null;
  usage: { input_tokens: number; output_tokens: number };
  pending_approvals: Array<{ id: string; name: string }>;
  output: { content: string } | null;
}

export async function consoleWorld(stack: ConsoleStack): Promise<ConsoleWorld> {
  const project = await createProject(stack.api);
  const provider = await createProvider(stack.api, {
    provider_type: 'openai',
    base_url: `${stack.vendor.url}/v1`,
  });
  const model = await createModel(stack.api, project.id, {
    provider_id: provider.id,
    model_id: 'gpt-test',
    pricing: { input_per_million_usd: 2, output_per_million_usd: 8 },
  });
  const failed: string[] = [];
  return {
    projectId: project.id,
    problems() {
      const favicon404 =
        /: Failed to load resource: the server responded with a status of 404 \(Not Found\)$/;
      return [...stack.errors.filter((e) => !favicon404.test(e)), ...failed];
    },
    modelId: model.id,
    async agent(fields = {}) {
      const prompt = await createPrompt(stack.api, project.id, { template: 'You are helpful.' });
      const name = uniqueName('agent');
      const res = await stack.api.request<{ id: string }>(
        'POST',
        `/api/agent-server/agents?project_id=${project.id}`,
        {
          name,
          model_id: model.id,
          prompt_id: prompt.id,
          ...fields,
        },
      );
      if (res.status !== 200) throw new Error(`agent create failed: ${res.text}`);
      return { id: res.body.data.id, name };
    },
    async converse(body) {
      const res = await stack.api.request<RunView>(
        'POST',
        `/api/agent-server/converse?project_id=${project.id}`,
        {
          conversation_id: `console-${randomUUID().slice(0, 8)}`,
          ...body,
        },
      );
      if (res.status !== 200) throw new Error(`converse failed: ${res.text}`);
      return res.body.data;
    },
    async open(pathname) {
      // First a page that reads nothing of a project by id, to choose the project in this browser.
      const page = await stack.open('/approvals');
      await page.evaluate((id) => localStorage.setItem('agent-server.project', id), project.id);
      page.on('response', (r) => {
        if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) failed.push(`${r.status()} ${r.url()}`);
      });
      await page.goto(`${stack.api.url}/console${pathname}`);
      return page;
    },
  };
}

export async function poll<T>(
  fn: () => Promise<T | undefined>,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
