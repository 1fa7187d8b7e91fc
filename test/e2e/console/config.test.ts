/**
 * The console's Configuration page in a real browser against a real stack:
 * providers, models, schemas, MCP servers, agents and virtual keys created
 * through the UI and checked through the REST API; the API's field errors
 * shown next to their fields; a virtual key's secret shown exactly once.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noBrowser, SCREENSHOTS, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { createProject, uniqueName, type ProjectData } from '../../helpers/factories.js';
import {
  createModel,
  createProvider,
  fakeApiKey,
  providerName,
  type ModelData,
  type ProviderData,
  type VirtualKeyData,
} from '../../helpers/factories/config.js';
import {
  createPrompt,
  createSchema,
  type PromptData,
  type SchemaData,
} from '../../helpers/factories/content.js';
import { noTemporal } from '../../helpers/services.js';
import { zipOf } from '../../helpers/skill-zip.js';
import { startEverythingServer, type RunningMcp } from '../../fixtures/mcp-servers.js';
import { appErrors, describedBy, label, openIn, pick, settled } from './form-helpers.js';

describe.skipIf(noTemporal() || noBrowser())('console: configuration', () => {
  let stack: ConsoleStack;
  let project: ProjectData;
  let everything: RunningMcp;
  let provider: ProviderData;

  beforeAll(async () => {
    [stack, everything] = await Promise.all([startConsoleStack(), startEverythingServer('streamableHttp')]);
    project = await createProject(stack.api);
  }, 180_000);
  afterAll(async () => {
    await everything?.stop();
    await stack?.close();
  });

  it('creates a provider through the UI: the key is write-only and shown masked; the API field errors sit next to their fields', async () => {
    const page = await openIn(stack, '/config/providers', project.id);
    const name = providerName();
    const key = fakeApiKey();

    await page.getByRole('button', { name: 'New provider' }).click();
    const dialog = page.getByRole('dialog', { name: 'New provider' });
    await label(dialog, 'Name').fill(name);
    await label(dialog, 'Base URL').fill('not a url');
    await label(dialog, 'API key').fill(key);
    await dialog.getByRole('button', { name: 'Create provider' }).click();
    // The API's 400 names base_url: its message appears under that input.
    const baseUrl = label(dialog, 'Base URL');
    await expect.poll(() => baseUrl.getAttribute('aria-invalid')).toBe('true');
    expect(await describedBy(baseUrl)).toMatch(/base_url.*valid uri/i);

    await baseUrl.fill(`${stack.vendor.url}/v1`);
    await dialog.getByRole('button', { name: 'Create provider' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const row = page.getByRole('row', { name: new RegExp(name) });
    await row.waitFor();
    expect(await row.textContent()).toContain(`••••••••${key.slice(-4)}`);
    expect(await page.content()).not.toContain(key);

    const listed = await stack.api.request<ProviderData[]>('GET', '/api/agent-server/providers?limit=200');
    provider = listed.body.data.find((p) => p.name === name)!;
    expect(provider).toMatchObject({
      provider_type: 'openai',
      base_url: `${stack.vendor.url}/v1`,
      has_api_key: true,
      api_key_last4: key.slice(-4),
    });
    await settled(page);
    await stack.screenshot(page, 'config-providers');

    // A name already taken: the 409's reason appears under Name.
    await page.getByRole('button', { name: 'New provider' }).click();
    await label(dialog, 'Name').fill(name);
    await dialog.getByRole('button', { name: 'Create provider' }).click();
    const nameInput = label(dialog, 'Name');
    await expect.poll(() => nameInput.getAttribute('aria-invalid')).toBe('true');
    expect(await describedBy(nameInput)).toContain('a provider with this name already exists');
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    // Edit: leaving the key empty keeps it.
    await page.getByRole('button', { name: `Edit ${name}` }).click();
    const edit = page.getByRole('dialog', { name: `Edit provider ${name}` });
    await label(edit, 'Timeout (ms)').fill('120000');
    await edit.getByRole('button', { name: 'Save provider' }).click();
    await edit.waitFor({ state: 'hidden' });
    const after = await stack.api.request<ProviderData>('GET', `/api/agent-server/providers/${provider.id}`);
    expect(after.body.data).toMatchObject({
      timeout_ms: 120000,
      has_api_key: true,
      api_key_last4: key.slice(-4),
    });
    expect(appErrors(stack.errors)).toEqual([]);
  });

  it('creates a model with pricing through the UI, asking for its provider while several of its type exist', async () => {
    provider ??= await createProvider(stack.api, { base_url: `${stack.vendor.url}/v1` });
    await createProvider(stack.api); // a second of the type, at least
    const page = await openIn(stack, '/config/models', project.id);
    await page.getByText('No model in this project').waitFor();
    const name = uniqueName('model');
    await page.getByRole('button', { name: 'New model' }).click();
    const dialog = page.getByRole('dialog', { name: 'New model' });
    await label(dialog, 'Name').fill(name);
    await label(dialog, 'Model id').fill('gpt-test');
    const providerSelect = label(dialog, 'Provider');
    expect(await describedBy(providerSelect)).toMatch(/^Required: \d+ providers of this type exist/);
    // Left empty, the API refuses it and says why under the field, naming the candidates.
    await dialog.getByRole('button', { name: 'Create model' }).click();
    await expect.poll(() => providerSelect.getAttribute('aria-invalid')).toBe('true');
    expect(await describedBy(providerSelect)).toMatch(
      /provider_id is required: \d+ providers of type openai could serve this model, choose one of \S+ \([0-9a-f-]{36}\)/,
    );
    await settled(page);
    await stack.screenshot(page, 'config-model-provider-required');
    await pick(page, providerSelect, provider.name);
    await label(dialog, 'Parameters').fill('{ "temperature": 0.3 }');
    await label(dialog, 'Input price (USD per 1M tokens)').fill('1.5');
    await label(dialog, 'Output price (USD per 1M tokens)').fill('3');
    await dialog.getByRole('button', { name: 'Create model' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('row', { name: new RegExp(name) }).waitFor();

    const listed = await stack.api.request<ModelData[]>(
      'GET',
      `/api/agent-server/models?project_id=${project.id}`,
    );
    expect(listed.body.data.find((m) => m.name === name)).toMatchObject({
      model_id: 'gpt-test',
      provider_type: 'openai',
      provider_id: provider.id,
      parameters: { temperature: 0.3 },
      pricing: { input_per_million_usd: 1.5, output_per_million_usd: 3 },
    });
    expect(appErrors(stack.errors)).toEqual([]);
  });

  it('the schema editor checks the JSON as you type, and shows what the API (ajv) says of the schema', async () => {
    const page = await openIn(stack, '/config/schemas', project.id);
    const name = uniqueName('schema');
    await page.getByRole('button', { name: 'New schema' }).click();
    const dialog = page.getByRole('dialog', { name: 'New schema' });
    await label(dialog, 'Name').fill(name);
    const editor = label(dialog, 'JSON Schema');
    await editor.fill('{ "type": ');
    expect(await describedBy(editor)).toContain('Not valid JSON');
    expect(await dialog.getByRole('button', { name: 'Create schema' }).isDisabled()).toBe(true);

    await editor.fill('{ "type": "no-such-type" }');
    await dialog.getByRole('button', { name: 'Create schema' }).click();
    await expect.poll(() => editor.getAttribute('aria-invalid')).toBe('true');
    expect(await describedBy(editor)).toMatch(/schema/i);

    await editor.fill('{ "type": "object", "properties": { "answer": { "type": "string" } } }');
    await dialog.getByRole('button', { name: 'Create schema' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const listed = await stack.api.request<SchemaData[]>(
      'GET',
      `/api/agent-server/schemas?project_id=${project.id}`,
    );
    expect(listed.body.data.find((s) => s.name === name)?.schema).toEqual({
      type: 'object',
      properties: { answer: { type: 'string' } },
    });
    expect(appErrors(stack.errors)).toEqual([]);
  });

  it('creates an MCP server through the UI and inspects its tools', async () => {
    const page = await openIn(stack, '/config/mcp-servers', project.id);
    const name = uniqueName('mcp');
    await page.getByRole('button', { name: 'New MCP server' }).click();
    const dialog = page.getByRole('dialog', { name: 'New MCP server' });
    await label(dialog, 'Name').fill(name);
    await label(dialog, 'Endpoint').fill(everything.url);
    await dialog.getByRole('button', { name: 'Add header' }).click();
    await label(dialog, 'Headers name 1').fill('X-Api-Key');
    await label(dialog, 'Headers value 1').fill('secret-value-0123456789abcdef');
    await dialog.getByRole('button', { name: 'Create MCP server' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const row = page.getByRole('row', { name: new RegExp(name) });
    await row.waitFor();

    await page.getByRole('button', { name: `Inspect ${name}` }).click();
    const tools = page.getByRole('dialog', { name: `Tools of ${name}` });
    await tools.getByText('echo', { exact: true }).waitFor({ timeout: 20_000 });
    await tools.getByText('echo', { exact: true }).click();
    await tools.getByText('"message"').first().waitFor();
    await page.keyboard.press('Escape');

    const listed = await stack.api.request<Array<{ name: string; headers: Record<string, string> }>>(
      'GET',
      `/api/agent-server/mcp-servers?project_id=${project.id}`,
    );
    expect(listed.body.data.find((s) => s.name === name)?.headers).toEqual({ 'X-Api-Key': '[redacted]' });
    expect(appErrors(stack.errors)).toEqual([]);
  });

  it('creates an agent through a form covering every field: summarizer, MCP tool filters, sandbox, skills', async () => {
    provider ??= await createProvider(stack.api, { base_url: `${stack.vendor.url}/v1` });
    const model = await createModel(stack.api, project.id, { provider_id: provider.id });
    const prompt: PromptData = await createPrompt(stack.api, project.id);
    const summaryPrompt: PromptData = await createPrompt(stack.api, project.id, { template: 'Summarize.' });
    const schema = await createSchema(stack.api, project.id);
    const mcpRes = await stack.api.request<{ id: string; name: string }>(
      'POST',
      `/api/agent-server/mcp-servers?project_id=${project.id}`,
      { name: uniqueName('mcp'), endpoint: everything.url },
    );
    const mcp = mcpRes.body.data;
    const zip = await zipOf([
      {
        path: 'pdf-tools/SKILL.md',
        content: '---\nname: pdf-tools\ndescription: Read PDFs\n---\nUse pdftotext.\n',
      },
      { path: 'pdf-tools/run.sh', content: 'echo hi\n' },
    ]);

    const page = await openIn(stack, '/config/agents', project.id);
    await page.getByText('No agent in this project').waitFor();
    const name = uniqueName('agent');
    await page.getByRole('button', { name: 'New agent' }).click();
    const dialog = page.getByRole('dialog', { name: 'New agent' });
    await label(dialog, 'Name').fill(name);
    await label(dialog, 'Description').fill('Answers questions about PDFs');
    await pick(page, label(dialog, 'Model'), new RegExp(model.name));
    await pick(page, label(dialog, 'Prompt'), prompt.name);
    await pick(page, label(dialog, 'Output schema'), schema.name);
    await label(dialog, 'Max iterations').fill('7');
    await label(dialog, 'Approval timeout (ms)').fill('60000');

    await dialog.getByText('LLM summary').click();
    await label(dialog, 'Token threshold').fill('5000');
    await label(dialog, 'Keep recent messages').fill('4');
    await pick(page, label(dialog, 'Summarizer prompt'), summaryPrompt.name);
    await pick(page, label(dialog, 'Summarizer model'), model.name);

    await dialog.getByRole('button', { name: 'Add MCP server' }).click();
    await pick(page, label(dialog, 'MCP server 1'), mcp.name);
    await dialog.getByRole('button', { name: 'Load its tools' }).click();
    const filter = label(dialog, 'Tool filter');
    await filter.fill('echo');
    await filter.press('Enter');
    const approval = label(dialog, 'Tools requiring approval');
    await approval.fill('get-sum');
    await approval.press('Enter');
    await approval.press('Tab'); // closes the suggestions

    await dialog.getByRole('switch', { name: /Sandbox enabled/ }).check();
    await label(dialog, 'Docker image').fill('ghcr.io/acme/sandbox:1.2');
    await dialog.getByRole('switch', { name: 'Every sandbox command needs approval' }).check();

    await dialog.locator('input[type=file]').setInputFiles({
      name: 'pdf-tools.zip',
      mimeType: 'application/zip',
      buffer: zip,
    });
    expect(await label(dialog, 'Skill name').inputValue()).toBe('pdf-tools');
    await dialog.getByRole('button', { name: 'Add', exact: true }).click();
    await dialog.getByText('pdf-tools.zip').waitFor();

    await page.setViewportSize({ width: 1400, height: 2600 });
    await settled(page);
    await dialog.screenshot({ path: path.join(SCREENSHOTS, 'config-agent-form.png') });
    await page.setViewportSize({ width: 1400, height: 900 });

    await dialog.getByRole('button', { name: 'Create agent' }).click();
    await dialog.waitFor({ state: 'hidden', timeout: 20_000 });
    await page.getByRole('row', { name: new RegExp(name) }).waitFor();

    const got = await stack.api.request<Record<string, unknown> & { id: string }>(
      'GET',
      `/api/agent-server/agents/by-name?name=${name}&project_id=${project.id}`,
    );
    expect(got.status).toBe(200);
    expect(got.body.data).toMatchObject({
      description: 'Answers questions about PDFs',
      model_id: model.id,
      prompt_id: prompt.id,
      prompt_label: 'latest',
      schema_id: schema.id,
      enable_history: true,
      max_iterations: 7,
      approval_timeout_ms: 60000,
      summarizer_type: 'llm',
      llm_summarizer_token_threshold: 5000,
      llm_summarizer_keep_recent_count: 4,
      llm_summarizer_prompt_id: summaryPrompt.id,
      llm_summarizer_prompt_label: 'latest',
      llm_summarizer_model_id: model.id,
      sliding_window_keep_count: null,
      mcp_servers: [{ mcp_server_id: mcp.id, tool_filters: ['echo'], tools_requiring_approval: ['get-sum'] }],
      sandbox: { enabled: true, docker_image: 'ghcr.io/acme/sandbox:1.2', require_approval: true },
    });
    const skills = await stack.api.request<Array<{ name: string; file_count: number }>>(
      'GET',
      `/api/agent-server/agents/${got.body.data.id}/skills`,
    );
    expect(skills.body.data).toEqual([expect.objectContaining({ name: 'pdf-tools', file_count: 2 })]);

    // Editing: a summarizer setting the API refuses shows its message next to the field.
    await page.getByRole('button', { name: `Edit ${name}` }).click();
    const edit = page.getByRole('dialog', { name: `Edit agent ${name}` });
    await edit.getByText('Sliding window').click();
    await edit.getByRole('button', { name: 'Save agent' }).click();
    const keep = label(edit, 'Messages kept');
    await expect.poll(() => keep.getAttribute('aria-invalid')).toBe('true');
    expect(await describedBy(keep)).toContain('sliding_window_keep_count');
    await keep.fill('12');
    await edit.getByRole('button', { name: 'Save agent' }).click();
    await edit.waitFor({ state: 'hidden' });
    const edited = await stack.api.request<Record<string, unknown>>(
      'GET',
      `/api/agent-server/agents/${got.body.data.id}`,
    );
    expect(edited.body.data).toMatchObject({
      summarizer_type: 'sliding_window',
      sliding_window_keep_count: 12,
      llm_summarizer_token_threshold: null,
    });
    expect(appErrors(stack.errors)).toEqual([]);
  });

  it('creates a virtual key and shows its secret exactly once; rotate shows a new one; revoke hides the key', async () => {
    provider ??= await createProvider(stack.api, { base_url: `${stack.vendor.url}/v1` });
    const page = await openIn(stack, '/config/virtual-keys', project.id);
    const name = uniqueName('vk');
    await page.getByRole('button', { name: 'New virtual key' }).click();
    const dialog = page.getByRole('dialog', { name: 'New virtual key' });
    await label(dialog, 'Name').fill(name);
    await pick(page, label(dialog, 'Grant 1 provider'), provider.name);
    await label(dialog, 'Requests per minute').fill('100');
    await label(dialog, 'Budget (USD)').fill('5');
    await dialog.getByRole('button', { name: 'Create key' }).click();

    const shown = page.getByRole('dialog', { name: `Secret of ${name}` });
    await shown.waitFor();
    const secret = (await shown.getByTestId('virtual-key-secret').textContent())!.trim();
    expect(secret).toMatch(/^sk-vk-[A-Za-z0-9_-]{20,}$/);
    await shown.getByRole('button', { name: 'Copy' }).waitFor();
    await settled(page);
    await stack.screenshot(page, 'config-virtual-key-secret');
    await shown.getByRole('button', { name: 'I have copied it' }).click();
    await shown.waitFor({ state: 'hidden' });

    const listed = await stack.api.request<VirtualKeyData[]>(
      'GET',
      '/api/agent-server/virtual-keys?limit=200',
    );
    const vk = listed.body.data.find((k) => k.name === name)!;
    expect(vk).toMatchObject({
      providers: [{ provider_id: provider.id, model_names: ['*'] }],
      rate_limit: { requests_per_minute: 100 },
      budget: { max_usd: 5, period: 'month' },
    });
    expect(secret.startsWith(vk.key_prefix)).toBe(true);
    const row = page.getByRole('row', { name: new RegExp(name) });
    expect(await row.textContent()).toContain(`${vk.key_prefix}…`);
    // Never again: not in the page, not after a reload.
    expect(await page.content()).not.toContain(secret);
    await page.reload();
    await page.getByRole('row', { name: new RegExp(name) }).waitFor();
    expect(await page.content()).not.toContain(secret);

    // Rotate: a new secret, shown once; the old one is gone.
    await page.getByRole('button', { name: `Rotate ${name}` }).click();
    await page
      .getByRole('dialog', { name: `Rotate ${name}?` })
      .getByRole('button', { name: 'Rotate' })
      .click();
    const rotated = page.getByRole('dialog', { name: `Secret of ${name}` });
    await rotated.waitFor();
    const second = (await rotated.getByTestId('virtual-key-secret').textContent())!.trim();
    expect(second).toMatch(/^sk-vk-/);
    expect(second).not.toBe(secret);
    await rotated.getByRole('button', { name: 'I have copied it' }).click();
    await rotated.waitFor({ state: 'hidden' });
    expect(await page.content()).not.toContain(second);

    // Revoke: gone from the list and the API.
    await page.getByRole('button', { name: `Revoke ${name}` }).click();
    await page
      .getByRole('dialog', { name: `Revoke ${name}?` })
      .getByRole('button', { name: 'Revoke' })
      .click();
    await page.getByRole('row', { name: new RegExp(name) }).waitFor({ state: 'detached' });
    expect((await stack.api.request('GET', `/api/agent-server/virtual-keys/${vk.id}`)).status).toBe(404);
    expect(appErrors(stack.errors)).toEqual([]);
  });
});
