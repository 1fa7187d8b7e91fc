/**
 * What the Responses API refuses, in OpenAI's error shape naming the field:
 * OpenAI's hosted tools, background mode, conversation objects and stored
 * prompts (out of scope), and malformed bodies. A refusal is never a 500,
 * nothing reaches a vendor and nothing is metered.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { createVirtualKey } from '../../helpers/factories/config.js';
import { FORMATS, startHarness, type Harness } from './gateway-harness.js';

let h: Harness;
let key: { id: string; secret_key: string };
beforeAll(async () => {
  h = await startHarness();
  key = await createVirtualKey(h.api, {
    providers: FORMATS.map((f) => ({ provider_id: h.providers[f].id, model_names: ['*'] })),
  });
});
afterAll(() => h.close());
beforeEach(() => FORMATS.forEach((f) => h.vendors[f].reset()));

async function post(extra: Record<string, unknown>, secret = key.secret_key) {
  const res = await fetch(`${h.api.url}/api/gateway/openai/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: `${h.providers.openai.name}/gpt-x`, input: 'hi', ...extra }),
  });
  return { status: res.status, body: (await res.json()) as { error: Record<string, unknown> } };
}

const tool = (type: string, more: Record<string, unknown> = {}) => ({ tools: [{ type, ...more }] });

/** [what, body fields, param named, words the message must contain] */
const OUT_OF_SCOPE: Array<[string, Record<string, unknown>, string, string]> = [
  ['web_search', tool('web_search'), 'tools[0].type', 'hosted tool "web_search"'],
  ['web_search_preview', tool('web_search_preview'), 'tools[0].type', 'hosted tool "web_search_preview"'],
  [
    'file_search',
    tool('file_search', { vector_store_ids: ['vs_1'] }),
    'tools[0].type',
    'hosted tool "file_search"',
  ],
  [
    'computer_use_preview',
    tool('computer_use_preview', { display_width: 1024, display_height: 768, environment: 'browser' }),
    'tools[0].type',
    'hosted tool "computer_use_preview"',
  ],
  [
    'code_interpreter',
    tool('code_interpreter', { container: { type: 'auto' } }),
    'tools[0].type',
    'hosted tool "code_interpreter"',
  ],
  ['image_generation', tool('image_generation'), 'tools[0].type', 'hosted tool "image_generation"'],
  [
    'mcp',
    tool('mcp', { server_label: 'x', server_url: 'https://example.com/mcp' }),
    'tools[0].type',
    'hosted tool "mcp"',
  ],
  ['a custom tool', tool('custom', { name: 'grammar' }), 'tools[0].type', 'only function tools'],
  ['background mode', { background: true }, 'background', 'Background mode'],
  ['conversation objects', { conversation: 'conv_123' }, 'conversation', 'conversation object'],
  ['stored prompts', { prompt: { id: 'pmpt_123' } }, 'prompt', 'stored prompt'],
  [
    'a hosted tool_choice',
    { tool_choice: { type: 'web_search_preview' } },
    'tool_choice',
    'web_search_preview',
  ],
  ['reasoning settings', { reasoning: { effort: 'high' } }, 'reasoning', 'reasoning'],
  ['include', { include: ['file_search_call.results'] }, 'include', 'include'],
];

it.each(OUT_OF_SCOPE)('%s: a 400 naming it', async (_what, extra, param, words) => {
  const { status, body } = await post(extra);
  expect(status).toBe(400);
  expect(body.error).toMatchObject({ type: 'invalid_request_error', param });
  expect(body.error.message).toContain(words);
  expect(body.error.message).toContain('not supported by this gateway');
});

/** [what, body fields, param named] */
const MALFORMED: Array<[string, Record<string, unknown>, string]> = [
  ['input of the wrong type', { input: 42 }, 'input'],
  ['no input at all', { input: [] }, 'input'],
  ['message content of the wrong type', { input: [{ role: 'user', content: 5 }] }, 'input[0].content'],
  ['an unknown role', { input: [{ role: 'robot', content: 'x' }] }, 'input[0].role'],
  [
    'a function_call without call_id',
    { input: [{ type: 'function_call', name: 'f', arguments: '{}' }] },
    'input[0].call_id',
  ],
  [
    'a function_call_output without output',
    { input: [{ type: 'function_call_output', call_id: 'c' }] },
    'input[0].output',
  ],
  [
    'a file part',
    { input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] },
    'input[0].content[0].type',
  ],
  ['an item reference', { input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0]'],
  ['a NUL in a stored input', { input: [{ role: 'user', content: 'a\u0000b' }] }, 'input[0].content'],
  ['temperature not a number', { temperature: 'hot' }, 'temperature'],
  ['temperature out of range', { temperature: 3 }, 'temperature'],
  ['max_output_tokens not a positive integer', { max_output_tokens: 0 }, 'max_output_tokens'],
  ['metadata with a non-string value', { metadata: { a: 1 } }, 'metadata.a'],
  [
    'a json_schema format without schema',
    { text: { format: { type: 'json_schema', name: 'x' } } },
    'text.format.schema',
  ],
  ['an unknown text.format type', { text: { format: { type: 'yaml' } } }, 'text.format.type'],
  ['a function tool without a name', { tools: [{ type: 'function' }] }, 'tools[0].name'],
  [
    'tool_choice naming no declared function',
    { tools: [{ type: 'function', name: 'f' }], tool_choice: { type: 'function', name: 'g' } },
    'tool_choice',
  ],
  ['store not a boolean', { store: 'yes' }, 'store'],
  ['previous_response_id not a string', { previous_response_id: 5 }, 'previous_response_id'],
  ['instructions not a string', { instructions: ['be brief'] }, 'instructions'],
  ['an unknown field', { temperatur: 0.5 }, 'temperatur'],
];

it.each(MALFORMED)('%s: a 400 naming the field', async (_what, extra, param) => {
  const { status, body } = await post(extra);
  expect(status).toBe(400);
  expect(body.error).toMatchObject({ type: 'invalid_request_error', param });
  expect(body.error.message).toContain(param);
});

it('a previous_response_id that names nothing is a 404 naming it', async () => {
  for (const id of ['resp_nope', `resp_${'0'.repeat(48)}`]) {
    const { status, body } = await post({ previous_response_id: id });
    expect(status).toBe(404);
    expect(body.error).toMatchObject({ param: 'previous_response_id', code: 'previous_response_not_found' });
  }
});

it('a NUL is fine when nothing is stored; a malformed id in the path is a 404, never a 500', async () => {
  expect((await post({ input: 'a\u0000b', store: false })).status).toBe(200);
  for (const id of ['resp_%00', 'x', '%F0%9F']) {
    const res = await fetch(`${h.api.url}/api/gateway/openai/v1/responses/${id}`, {
      headers: { authorization: `Bearer ${key.secret_key}` },
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
  }
});

it('none of the refusals reached a vendor or was metered', async () => {
  const own = await createVirtualKey(h.api, {
    providers: [{ provider_id: h.providers.openai.id, model_names: ['*'] }],
  });
  for (const [, extra] of [...OUT_OF_SCOPE, ...MALFORMED]) await post(extra, own.secret_key);
  expect(FORMATS.flatMap((f) => h.vendors[f].received)).toEqual([]);
  const usageRows = () =>
    h.api.server.deps
      .db('gateway_usage')
      .where({ virtual_key_id: own.id })
      .count<Array<{ n: number }>>({ n: '*' });
  expect(Number((await usageRows())[0]!.n)).toBe(0);
  // The same key's valid call is metered: the count above could have risen.
  expect((await post({}, own.secret_key)).status).toBe(200);
  expect(Number((await usageRows())[0]!.n)).toBe(1);
});
