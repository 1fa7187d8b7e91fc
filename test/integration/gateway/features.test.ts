import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { createProvider, createVirtualKey, fakeApiKey } from '../../helpers/factories/config.js';
import {
  anthropicClient,
  FORMATS,
  geminiClient,
  openaiClient,
  startHarness,
  type Harness,
} from './gateway-harness.js';
import { chatRequest } from './raw-requests.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() => FORMATS.forEach((f) => h.vendors[f].reset()));

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

it('images by URL and base64 cross into each vendor’s own image parts', async () => {
  const client = openaiClient(h.api, h.secret);
  const content = [
    { type: 'text' as const, text: 'Compare' },
    { type: 'image_url' as const, image_url: { url: 'https://example.com/cat.png' } },
    { type: 'image_url' as const, image_url: { url: `data:image/png;base64,${PNG}` } },
  ];
  await client.chat.completions.create({
    model: `${h.providers.anthropic.name}/c`,
    messages: [{ role: 'user', content }],
  });
  expect((h.vendors.anthropic.received[0]!.body.messages as Array<{ content: unknown }>)[0]!.content).toEqual(
    [
      { type: 'text', text: 'Compare' },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
    ],
  );
  await client.chat.completions.create({
    model: `${h.providers.gemini.name}/g`,
    messages: [{ role: 'user', content }],
  });
  expect((h.vendors.gemini.received[0]!.body.contents as Array<{ parts: unknown }>)[0]!.parts).toEqual([
    { text: 'Compare' },
    { fileData: { mimeType: 'image/png', fileUri: 'https://example.com/cat.png' } },
    { inlineData: { mimeType: 'image/png', data: PNG } },
  ]);
  await anthropicClient(h.api, h.secret).messages.create({
    model: `${h.providers.openai.name}/o`,
    max_tokens: 10,
    messages: [
      {
        role: 'user',
        content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }],
      },
    ],
  });
  expect((h.vendors.openai.received[0]!.body.messages as Array<{ content: unknown }>)[0]!.content).toEqual([
    { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
  ]);
});

it('JSON schema output, stop sequences, temperature and tool_choice keep their meaning across formats', async () => {
  const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
  await openaiClient(h.api, h.secret).chat.completions.create({
    model: `${h.providers.gemini.name}/g`,
    messages: [{ role: 'user', content: 'json please' }],
    response_format: { type: 'json_schema', json_schema: { name: 'out', schema } },
    stop: ['END'],
    temperature: 0.2,
    tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
    tool_choice: { type: 'function', function: { name: 'f' } },
  });
  expect(h.vendors.gemini.received[0]!.body).toMatchObject({
    generationConfig: {
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
      stopSequences: ['END'],
      temperature: 0.2,
    },
    toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] } },
  });
  await geminiClient(h.api, h.secret).models.generateContent({
    model: `${h.providers.openai.name}/o`,
    contents: 'json please',
    config: {
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
      stopSequences: ['END'],
      temperature: 0.2,
    },
  });
  expect(h.vendors.openai.received[0]!.body).toMatchObject({
    response_format: { type: 'json_schema', json_schema: { name: 'response', schema } },
    stop: ['END'],
    temperature: 0.2,
  });
});

it('the provider’s real key reaches only the vendor: never the caller, the logs, or an error', async () => {
  const apiKey = fakeApiKey();
  const provider = await createProvider(h.api, {
    provider_type: 'anthropic',
    base_url: h.vendors.anthropic.url,
    api_key: apiKey,
  });
  const key = await createVirtualKey(h.api, {
    providers: [{ provider_id: provider.id, model_names: ['*'] }],
  });
  h.vendors.anthropic.script(
    {},
    { error: { status: 400, message: 'nope' } },
    { error: { status: 500 } },
    { error: { status: 500 } },
    { error: { status: 500 } },
  );
  const bodies: string[] = [];
  for (let i = 0; i < 3; i++)
    bodies.push(
      await (await chatRequest(h.api, 'openai', `${provider.name}/c`, { secret: key.secret_key })).text(),
    );
  expect(h.vendors.anthropic.received[0]!.headers['x-api-key']).toBe(apiKey);
  for (const text of [...bodies, h.api.logs.text]) {
    expect(text).not.toContain(apiKey);
    expect(text).not.toContain(key.secret_key);
  }
});
