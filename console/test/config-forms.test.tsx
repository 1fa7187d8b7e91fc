/**
 * The configuration forms show the API's own field errors next to the
 * inputs they name, and whatever no input shows in the alert above the
 * buttons; they send what the inputs hold.
 */
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import type { Model, Provider, VirtualKey } from '../src/api/types.js';
import { KeyForm } from '../src/features/config/keys/key-form.js';
import { ModelForm } from '../src/features/config/models/model-form.js';
import { ProviderForm } from '../src/features/config/providers/provider-form.js';
import { SchemaForm } from '../src/features/config/schemas/schema-form.js';
import { PromptVersionForm } from '../src/features/prompts/new-prompt-form.js';
import { describedBy, input } from './dom.js';
import { answer, failure, invalid, ok, requests } from './fake-api.js';
import { renderPage } from './render.js';

const PROVIDER: Provider = {
  id: 'prov-1',
  name: 'openai-main',
  provider_type: 'openai',
  base_url: null,
  has_api_key: true,
  api_key_last4: 'abcd',
  headers: {},
  connect_timeout_ms: 10_000,
  timeout_ms: 600_000,
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
};

const sent = (method: string, path: string) =>
  requests.filter((r) => r.method === method && r.path === path).map((r) => r.body);

async function expectInvalid(label: string, message: string | RegExp) {
  const el = input(label);
  await waitFor(() => expect(el.getAttribute('aria-invalid')).toBe('true'));
  expect(describedBy(el)).toMatch(message);
}

describe('the provider form', () => {
  it('puts each field the API names under its input, and the fields it shows nowhere in the alert', async () => {
    answer(
      'POST /api/agent-server/providers',
      invalid({ base_url: '"base_url" must be a valid uri', region: '"region" is not allowed' }),
    );
    const user = userEvent.setup();
    renderPage(<ProviderForm onDone={() => {}} />);
    await user.type(input('Name'), 'acme');
    await user.type(input('Base URL'), 'not a url');
    await user.click(screen.getByRole('button', { name: 'Create provider' }));

    await expectInvalid('Base URL', /"base_url" must be a valid uri/);
    expect(input('Name').getAttribute('aria-invalid')).not.toBe('true');
    const alert = screen.getByRole('alert');
    expect(alert.textContent).toContain('Validation failed');
    expect(alert.textContent).toContain('"region" is not allowed');
    expect(alert.textContent).not.toContain('base_url');
  });

  it('shows a conflict (a name already taken) under Name, with no alert', async () => {
    answer(
      'POST /api/agent-server/providers',
      failure(409, 'Conflict', { field: 'name', reason: 'a provider with this name already exists' }),
    );
    const user = userEvent.setup();
    renderPage(<ProviderForm onDone={() => {}} />);
    await user.type(input('Name'), 'taken');
    await user.click(screen.getByRole('button', { name: 'Create provider' }));

    await expectInvalid('Name', 'a provider with this name already exists');
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('sends the key only when one is typed, and leaves an empty timeout to the server', async () => {
    answer('PATCH /api/agent-server/providers/prov-1', ok(PROVIDER));
    const onDone = vi.fn();
    const user = userEvent.setup();
    renderPage(<ProviderForm provider={PROVIDER} onDone={onDone} />);
    await user.clear(input('Connect timeout (ms)'));
    await user.click(screen.getByRole('button', { name: 'Save provider' }));

    await waitFor(() => expect(onDone).toHaveBeenCalled());
    expect(sent('PATCH', '/api/agent-server/providers/prov-1')).toEqual([
      { name: 'openai-main', provider_type: 'openai', base_url: null, headers: {}, timeout_ms: 600_000 },
    ]);
  });
});

describe('the model form', () => {
  it('puts nested fields (pricing, parameters) under their inputs', async () => {
    answer('GET /api/agent-server/providers', ok([PROVIDER]));
    answer(
      'POST /api/agent-server/models',
      invalid({
        'pricing.input_per_million_usd': '"pricing.input_per_million_usd" must be greater than or equal to 0',
        'parameters.temperature': '"parameters.temperature" must be at most 2',
      }),
    );
    const user = userEvent.setup();
    renderPage(<ModelForm projectId="proj-1" onDone={() => {}} />);
    await user.type(input('Name'), 'fast');
    await user.type(input('Model id'), 'gpt-test');
    await user.type(input('Parameters'), '{{ "temperature": 3 }');
    await user.type(input('Input price (USD per 1M tokens)'), '1');
    await user.click(screen.getByRole('button', { name: 'Create model' }));

    await expectInvalid('Input price (USD per 1M tokens)', /must be greater than or equal to 0/);
    await expectInvalid('Parameters', /"parameters.temperature" must be at most 2/);
    expect(input('Output price (USD per 1M tokens)').getAttribute('aria-invalid')).not.toBe('true');
    expect(screen.queryByRole('alert')).toBeNull();
    expect(sent('POST', '/api/agent-server/models')).toEqual([
      expect.objectContaining({
        name: 'fast',
        model_id: 'gpt-test',
        parameters: { temperature: 3 },
        pricing: { input_per_million_usd: 1, output_per_million_usd: 0 },
      }),
    ]);
  });

  it('refuses parameters that are not a JSON object without asking the API', async () => {
    answer('GET /api/agent-server/providers', ok([PROVIDER]));
    const user = userEvent.setup();
    renderPage(<ModelForm projectId="proj-1" onDone={() => {}} />);
    await user.type(input('Name'), 'fast');
    await user.type(input('Parameters'), '[[1, 2]');
    await user.click(screen.getByRole('button', { name: 'Create model' }));

    await expectInvalid('Parameters', 'Parameters must be a JSON object');
    expect(sent('POST', '/api/agent-server/models')).toEqual([]);
  });

  it('edits an existing model in place', async () => {
    const model = {
      id: 'model-1',
      name: 'fast',
      model_id: 'gpt-test',
      provider_type: 'openai',
      provider_id: null,
      parameters: { temperature: 0.2 },
      pricing: null,
      max_output_tokens: null,
    } as unknown as Model;
    answer('GET /api/agent-server/providers', ok([PROVIDER]));
    answer('PATCH /api/agent-server/models/model-1', invalid({ max_output_tokens: 'too many' }));
    const user = userEvent.setup();
    renderPage(<ModelForm projectId="proj-1" item={model} onDone={() => {}} />);
    expect(input('Model id').value).toBe('gpt-test');
    await user.type(input('Max output tokens'), '99999999');
    await user.click(screen.getByRole('button', { name: 'Save model' }));

    await expectInvalid('Max output tokens', 'too many');
    expect(sent('PATCH', '/api/agent-server/models/model-1')).toEqual([
      expect.objectContaining({
        parameters: { temperature: 0.2 },
        pricing: null,
        max_output_tokens: 99999999,
      }),
    ]);
  });
});

describe('the schema form', () => {
  it('checks the JSON as it is typed, then shows what the API says of the schema', async () => {
    answer(
      'POST /api/agent-server/schemas',
      invalid({ schema: 'schema is invalid: data/type must be equal to one of the allowed values' }),
    );
    const user = userEvent.setup();
    renderPage(<SchemaForm projectId="proj-1" onDone={() => {}} />);
    await user.type(input('Name'), 'answer');
    const editor = input('JSON Schema');
    await user.clear(editor);
    await user.type(editor, '{{ "type": ');
    expect(describedBy(editor)).toContain('Not valid JSON');
    expect(screen.getByRole('button', { name: 'Create schema' }).hasAttribute('disabled')).toBe(true);

    await user.type(editor, '"no-such-type" }');
    await user.click(screen.getByRole('button', { name: 'Create schema' }));
    await expectInvalid('JSON Schema', /schema is invalid/);
  });
});

describe('the virtual key form', () => {
  it("puts a grant's errors on that grant's inputs", async () => {
    answer('GET /api/agent-server/providers', ok([PROVIDER]));
    answer(
      'POST /api/agent-server/virtual-keys',
      invalid({
        'providers.0.provider_id': '"providers[0].provider_id" is required',
        'budget.max_usd': '"budget.max_usd" must be a positive number',
      }),
    );
    const user = userEvent.setup();
    renderPage(<KeyForm onDone={() => {}} onCreated={() => {}} />);
    await user.type(input('Name'), 'app');
    await user.type(input('Budget (USD)'), '5');
    await user.click(screen.getByRole('button', { name: 'Create key' }));

    await expectInvalid('Grant 1 provider', /provider_id" is required/);
    await expectInvalid('Budget (USD)', /must be a positive number/);
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('edits a key: its grants and limits are filled in', () => {
    const key = {
      id: 'vk-1',
      name: 'app',
      key_prefix: 'sk-vk-ab',
      providers: [{ provider_id: 'prov-1', model_names: ['gpt-test'] }],
      expires_at: null,
      rate_limit: { requests_per_minute: 100 },
      budget: { max_usd: 5, period: 'week' },
      fallbacks: ['openai-main/gpt-mini'],
    } as unknown as VirtualKey;
    answer('GET /api/agent-server/providers', ok([PROVIDER]));
    renderPage(<KeyForm vkey={key} onDone={() => {}} onCreated={() => {}} />);
    expect(input('Requests per minute').value).toBe('100');
    expect(input('Budget period').value).toBe('week');
    expect(screen.getByText('openai-main/gpt-mini')).toBeTruthy();
  });
});

describe('the prompt form', () => {
  it('shows the API message for the commit message under its input', async () => {
    answer(
      'POST /api/agent-server/prompts',
      invalid({ commit_message: '"commit_message" is not allowed to be empty' }),
    );
    const user = userEvent.setup();
    renderPage(<PromptVersionForm projectId="proj-1" onDone={() => {}} />);
    await user.type(input('Name'), 'greeting');
    await user.type(input('Template'), 'Hello {{{{name}}');
    await user.clear(input('Commit message'));
    await user.click(screen.getByRole('button', { name: 'Create prompt' }));

    await expectInvalid('Commit message', /"commit_message" is not allowed to be empty/);
    expect(sent('POST', '/api/agent-server/prompts')).toEqual([
      { name: 'greeting', template: 'Hello {{name}}', commit_message: '' },
    ]);
  });
});
