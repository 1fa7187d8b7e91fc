/**
 * Streaming on the Responses API: the typed events in order with their
 * sequence numbers, through `responses.create({stream: true})` and
 * `responses.stream()` of the official SDK, from each provider type; usage
 * in `response.completed`; the stored response; a break mid-stream.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FORMATS, openaiClient, startHarness, type Harness } from './gateway-harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() => FORMATS.forEach((f) => h.vendors[f].reset()));

type Event = OpenAI.Responses.ResponseStreamEvent;
const weather = {
  type: 'function' as const,
  name: 'weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } } },
  strict: false,
};
const CALLS = [
  { name: 'weather', arguments: { city: 'Paris' } },
  { name: 'weather', arguments: { city: 'Rome' } },
];

/** Event types with runs of deltas collapsed, to compare an order that does not depend on how text was split. */
const shape = (events: Event[]) =>
  events.map((e) => e.type).filter((t, i, all) => !(t.endsWith('.delta') && all[i - 1] === t));

describe.each(FORMATS)('from a %s provider', (provider) => {
  const model = () => `${h.providers[provider].name}/model-x`;
  const client = () => openaiClient(h.api, h.secret);

  it('text: every event in order, numbered from 0; the deltas make the text; usage in response.completed; stored', async () => {
    h.vendors[provider].script({
      reply: { text: 'one two three four', usage: { input: 300, output: 4, cacheRead: 200 } },
    });
    const events: Event[] = [];
    for await (const e of await client().responses.create({ model: model(), input: 'count', stream: true }))
      events.push(e);
    expect(shape(events)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const deltas = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : []));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('one two three four');
    const done = events.find((e) => e.type === 'response.output_text.done');
    expect(done).toMatchObject({ text: 'one two three four', output_index: 0, content_index: 0 });
    const created = events[0] as OpenAI.Responses.ResponseCreatedEvent;
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(created.response).toMatchObject({ status: 'in_progress', output: [], usage: null });
    expect(completed.response.id).toBe(created.response.id);
    expect(completed.response).toMatchObject({
      status: 'completed',
      output: [
        {
          type: 'message',
          status: 'completed',
          content: [{ type: 'output_text', text: 'one two three four' }],
        },
      ],
      usage: {
        input_tokens: 300,
        input_tokens_details: { cached_tokens: 200 },
        output_tokens: 4,
        total_tokens: 304,
      },
    });
    // Stored before the stream's last bytes: readable the moment the stream has ended.
    const stored = await client().responses.retrieve(completed.response.id);
    expect(stored).toMatchObject({
      status: 'completed',
      output: completed.response.output,
      usage: completed.response.usage,
    });
  });

  it('tools: function_call items with their argument deltas, through responses.stream()', async () => {
    h.vendors[provider].script({ reply: { tool_calls: CALLS } });
    const stream = client().responses.stream({ model: model(), input: 'weather?', tools: [weather] });
    const events: Event[] = [];
    stream.on('event', (e) => events.push(e));
    const final = await stream.finalResponse();
    const calls = final.output.filter((o) => o.type === 'function_call');
    expect(calls.map((c) => [c.name, JSON.parse(c.arguments) as unknown, c.status])).toEqual([
      ['weather', { city: 'Paris' }, 'completed'],
      ['weather', { city: 'Rome' }, 'completed'],
    ]);
    for (const c of calls) {
      const deltas = events.flatMap((e) =>
        e.type === 'response.function_call_arguments.delta' && e.item_id === c.id ? [e.delta] : [],
      );
      expect(deltas.join('')).toBe(c.arguments);
      expect(events).toContainEqual(
        expect.objectContaining({
          type: 'response.function_call_arguments.done',
          item_id: c.id,
          arguments: c.arguments,
        }),
      );
    }
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.at(-1)!.type).toBe('response.completed');
  });

  it('text then calls: the message is closed before the first call is added', async () => {
    h.vendors[provider].script({ reply: { text: 'Let me check.', tool_calls: CALLS } });
    const stream = client().responses.stream({ model: model(), input: 'weather?', tools: [weather] });
    const events: Event[] = [];
    stream.on('event', (e) => events.push(e));
    const final = await stream.finalResponse();
    expect(final.output.map((o) => o.type)).toEqual(['message', 'function_call', 'function_call']);
    expect(final.output_text).toBe('Let me check.');
    const messageDone = events.findIndex(
      (e) => e.type === 'response.output_item.done' && e.output_index === 0,
    );
    const callAdded = events.findIndex(
      (e) => e.type === 'response.output_item.added' && e.output_index === 1,
    );
    expect(messageDone).toBeGreaterThan(0);
    expect(messageDone).toBeLessThan(callAdded);
  });
});

/** The raw SSE of a response stream: event name and JSON data of each event. */
async function rawEvents(
  body: Record<string, unknown>,
): Promise<Array<{ event: string; data: Record<string, unknown> }>> {
  const res = await fetch(`${h.api.url}/api/gateway/openai/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${h.secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
  });
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  return (await res.text())
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)![1]!;
      const data = JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as Record<string, unknown>;
      return { event, data };
    });
}

it('each SSE event is named by its type, and nothing follows response.completed (no [DONE])', async () => {
  const events = await rawEvents({ model: `${h.providers.gemini.name}/g`, input: 'hi' });
  expect(events.every((e) => e.event === e.data.type)).toBe(true);
  expect(events.at(-1)!.event).toBe('response.completed');
});

it('a break mid-stream ends with response.failed and an error event; the SDK throws; nothing is stored', async () => {
  const model = `${h.providers.openai.name}/m`;
  // Spaced events, so the first ones are through before the connection is cut.
  const cut = { reply: { text: 'one two three four five six' }, cutAfter: 3, chunkDelayMs: 20 };
  h.vendors.openai.script(cut);
  const events = await rawEvents({ model, input: 'count' });
  expect(events.map((e) => e.event)).toContain('response.output_text.delta');
  expect(events.slice(-2).map((e) => e.event)).toEqual(['response.failed', 'error']);
  const failed = events.at(-2)!.data.response as Record<string, unknown>;
  expect(failed).toMatchObject({ status: 'failed', error: { code: 'server_error' } });
  const broke = /stream (broke|ended before the answer was complete)/;
  expect((failed.error as { message: string }).message).toMatch(broke);
  expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
  const client = openaiClient(h.api, h.secret);
  await expect(client.responses.retrieve(failed.id as string)).rejects.toBeInstanceOf(OpenAI.NotFoundError);

  h.vendors.openai.script(cut);
  const err = await client.responses
    .stream({ model, input: 'count' })
    .finalResponse()
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(OpenAI.APIError);
  expect((err as Error).message).toMatch(broke);
});
