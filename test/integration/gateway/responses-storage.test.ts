/**
 * Stored responses: GET, DELETE and input_items through the official SDK,
 * each visible only to the key that stored it, `store: false`, and
 * retention (expired rows are invisible at once and swept later).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { GatewayResponsesRepository } from '../../../core/repositories/gateway-responses.repository.js';
import { createVirtualKey } from '../../helpers/factories/config.js';
import { startTestApi } from '../../helpers/api.js';
import { FORMATS, openaiClient, startHarness, type Harness } from './gateway-harness.js';
import { vendorView } from './responses-vendor-view.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ GATEWAY_RESPONSES_RETENTION_DAYS: '2' });
});
afterAll(() => h.close());
beforeEach(() => FORMATS.forEach((f) => h.vendors[f].reset()));

const model = () => `${h.providers.anthropic.name}/claude-x`;
const db = () => h.api.server.deps.db;
const rowOf = (id: string) =>
  db()<{ id: string; created_at: Date; expires_at: Date }>('gateway_responses').where({ id }).first();
const notFound = (p: Promise<unknown>) =>
  expect(p).rejects.toSatisfy((e: unknown) => e instanceof OpenAI.NotFoundError);

it('GET returns the response as created; input_items lists its conversation; DELETE removes it', async () => {
  const client = openaiClient(h.api, h.secret);
  const r1 = await client.responses.create({ model: model(), input: 'My name is Ada.' });
  const r2 = await client.responses.create({
    model: model(),
    previous_response_id: r1.id,
    instructions: 'Be brief.',
    input: [{ role: 'user', content: [{ type: 'input_text', text: 'And yours?' }] }],
    metadata: { run: 'r-7' },
  });
  const got = await client.responses.retrieve(r2.id);
  expect(got).toEqual(r2);
  expect(got).toMatchObject({
    previous_response_id: r1.id,
    instructions: 'Be brief.',
    metadata: { run: 'r-7' },
  });

  // The whole conversation r2 answered, newest first (OpenAI's default order), each item with an id.
  const page = await client.responses.inputItems.list(r2.id);
  const items = page.data.map((it) => {
    const m = it as { type: string; role?: string; content?: Array<{ text: string }> };
    return [m.type, m.role, m.content?.[0]?.text];
  });
  expect(items).toEqual([
    ['message', 'user', 'And yours?'],
    ['message', 'assistant', 'Hello from the scripted vendor'],
    ['message', 'user', 'My name is Ada.'],
  ]);
  expect(page.data.every((it) => typeof it.id === 'string' && it.id.length > 4)).toBe(true);
  const oldestFirst = await client.responses.inputItems.list(r2.id, { order: 'asc', limit: 1 });
  expect(oldestFirst.data.map((it) => it.id)).toEqual([page.data[2]!.id]);
  expect(oldestFirst.has_more).toBe(true);
  const next = await client.responses.inputItems.list(r2.id, { order: 'asc', after: page.data[2]!.id });
  expect(next.data.map((it) => it.id)).toEqual([page.data[1]!.id, page.data[0]!.id]);

  const deleted = await fetch(`${h.api.url}/api/gateway/openai/v1/responses/${r2.id}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${h.secret}` },
  });
  expect(await deleted.json()).toEqual({ id: r2.id, object: 'response.deleted', deleted: true });
  await notFound(client.responses.retrieve(r2.id));
  await notFound(client.responses.delete(r2.id));
  // Its ancestor stands on its own.
  expect((await client.responses.retrieve(r1.id)).output_text).toBe('Hello from the scripted vendor');
});

it('another key gets a 404 in OpenAI’s shape for GET, DELETE, input_items and previous_response_id', async () => {
  const mine = await openaiClient(h.api, h.secret).responses.create({
    model: model(),
    input: 'secret plans',
  });
  const other = await createVirtualKey(h.api, {
    providers: [{ provider_id: h.providers.anthropic.id, model_names: ['*'] }],
  });
  const theirs = openaiClient(h.api, other.secret_key);
  await notFound(theirs.responses.retrieve(mine.id));
  await notFound(theirs.responses.inputItems.list(mine.id));
  await notFound(theirs.responses.delete(mine.id));
  const raw = await fetch(`${h.api.url}/api/gateway/openai/v1/responses/${mine.id}`, {
    headers: { authorization: `Bearer ${other.secret_key}` },
  });
  expect(raw.status).toBe(404);
  expect(await raw.json()).toEqual({
    error: {
      message: `Response with id "${mine.id}" not found.`,
      type: 'invalid_request_error',
      param: null,
      code: null,
    },
  });
  const cont = await theirs.responses
    .create({ model: model(), previous_response_id: mine.id, input: 'tell me' })
    .catch((e: unknown) => e);
  expect(cont).toBeInstanceOf(OpenAI.NotFoundError);
  expect((cont as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({
    param: 'previous_response_id',
    code: 'previous_response_not_found',
  });
  expect(h.vendors.anthropic.received).toHaveLength(1);
  // Still there for its owner.
  expect((await openaiClient(h.api, h.secret).responses.retrieve(mine.id)).id).toBe(mine.id);
});

it('store: false stores nothing, so neither GET nor previous_response_id finds it', async () => {
  const client = openaiClient(h.api, h.secret);
  const res = await client.responses.create({ model: model(), input: 'forget me', store: false });
  expect(res).toMatchObject({ store: false, output_text: 'Hello from the scripted vendor' });
  expect(await rowOf(res.id)).toBeUndefined();
  await notFound(client.responses.retrieve(res.id));
  await notFound(client.responses.create({ model: model(), previous_response_id: res.id, input: 'again' }));
  // A stored follow-up of an unstored turn cannot exist, but a stored turn can be continued unstored.
  const kept = await client.responses.create({ model: model(), input: 'keep me' });
  const next = await client.responses.create({
    model: model(),
    previous_response_id: kept.id,
    input: 'and this?',
    store: false,
  });
  expect(await rowOf(next.id)).toBeUndefined();
  expect(vendorView('anthropic', h.vendors.anthropic.received[2]!).turns).toEqual([
    'user: keep me',
    'assistant: Hello from the scripted vendor',
    'user: and this?',
  ]);
});

it('a row expires GATEWAY_RESPONSES_RETENTION_DAYS after it is written; expired rows are invisible, then swept', async () => {
  const client = openaiClient(h.api, h.secret);
  const old = await client.responses.create({ model: model(), input: 'old' });
  const fresh = await client.responses.create({ model: model(), input: 'fresh' });
  const row = await rowOf(old.id);
  const days = (row!.expires_at.getTime() - row!.created_at.getTime()) / 86_400_000;
  expect(days).toBeCloseTo(2, 2);

  await db()('gateway_responses')
    .where({ id: old.id })
    .update({ expires_at: db().raw(`now() - interval '1 second'`) });
  await notFound(client.responses.retrieve(old.id));
  await notFound(client.responses.create({ model: model(), previous_response_id: old.id, input: 'x' }));
  expect(await rowOf(old.id)).toBeDefined();

  // Two replicas sweeping at once delete it once between them, and nothing else.
  const repo = new GatewayResponsesRepository(db());
  const swept = await Promise.all([repo.sweepExpired(), repo.sweepExpired()]);
  expect(swept.reduce((a, b) => a + b, 0)).toBe(1);
  expect(await repo.sweepExpired()).toBe(0);
  expect(await rowOf(old.id)).toBeUndefined();
  expect((await client.responses.retrieve(fresh.id)).id).toBe(fresh.id);
});

it('a stored response is readable from another replica as soon as its answer has arrived', async () => {
  // The same database and SECRETS_KEY: a second replica of the same deployment.
  const other = await startTestApi({ SECRETS_KEY: h.api.config.secretsKey!.toString('base64') });
  try {
    const res = await openaiClient(h.api, h.secret).responses.create({ model: model(), input: 'hi' });
    const elsewhere = openaiClient(other, h.secret);
    expect((await elsewhere.responses.retrieve(res.id)).id).toBe(res.id);
    const next = await elsewhere.responses.create({
      model: model(),
      previous_response_id: res.id,
      input: 'go on',
    });
    expect(next.previous_response_id).toBe(res.id);
  } finally {
    await other.close();
  }
});

it('the answer’s last bytes wait for its stored row (JSON and stream)', async () => {
  const client = openaiClient(h.api, h.secret);
  const held = async <T>(call: () => Promise<T>, started: () => boolean) => {
    // While another transaction holds the table, no row can be written: the answer must wait.
    const trx = await db().transaction();
    await trx.raw('lock table gateway_responses in exclusive mode');
    let done = false;
    const pending = call().finally(() => (done = true));
    await new Promise((r) => setTimeout(r, 500));
    const waited = !done && started();
    await trx.commit();
    const value = await pending;
    expect(waited).toBe(true);
    return value;
  };
  const json = await held(
    () => client.responses.create({ model: model(), input: 'hold on' }),
    () => h.vendors.anthropic.received.length === 1,
  );
  expect(await rowOf(json.id)).toBeDefined();

  h.vendors.anthropic.script({ reply: { text: 'streamed while the table is locked' } });
  let deltas = 0;
  const streamed = await held(
    () => {
      const s = client.responses.stream({ model: model(), input: 'hold on' });
      s.on('response.output_text.delta', () => deltas++);
      return s.finalResponse();
    },
    () => deltas > 0,
  );
  expect(await rowOf(streamed.id)).toBeDefined();
});
