/**
 * Deleting a virtual key deletes the Responses API answers it stored (their
 * rows hold whole conversations), in the same transaction, and keeps its
 * usage rows (docs/security.md#virtual-keys). A response still being answered
 * when its key is deleted is not stored after the delete.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GatewayResponsesRepository } from '../../../core/repositories/gateway-responses.repository.js';
import { VirtualKeysRepository } from '../../../core/repositories/virtual-keys.repository.js';
import { createVirtualKey, VIRTUAL_KEYS } from '../../helpers/factories/config.js';
import { FORMATS, openaiClient, startHarness, type Harness } from './gateway-harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() => FORMATS.forEach((f) => h.vendors[f].reset()));

const db = () => h.api.server.deps.db;
const model = () => `${h.providers.openai.name}/gpt-x`;
const newKey = () =>
  createVirtualKey(h.api, {
    providers: [{ provider_id: h.providers.openai.id, model_names: ['*'] }],
  });
const storedOf = async (keyId: string) =>
  (
    await db()<{ id: string; virtual_key_id: string }>('gateway_responses')
      .where({ virtual_key_id: keyId })
      .select('id')
  ).map((r) => r.id);
const usageRowsOf = async (keyId: string) =>
  Number((await db()('gateway_usage').where({ virtual_key_id: keyId }).count({ n: '*' }).first())?.n);

describe('DELETE /virtual-keys/{id}', () => {
  it("deletes the key's stored responses and keeps its usage rows and other keys' responses", async () => {
    const key = await newKey();
    const other = await newKey();
    const client = openaiClient(h.api, key.secret_key);
    const r1 = await client.responses.create({ model: model(), input: 'my account number is 12345' });
    const r2 = await client.responses.create({ model: model(), previous_response_id: r1.id, input: 'and?' });
    const kept = await openaiClient(h.api, other.secret_key).responses.create({
      model: model(),
      input: 'hi',
    });
    expect((await storedOf(key.id)).sort()).toEqual([r1.id, r2.id].sort());
    await expect.poll(() => usageRowsOf(key.id), { timeout: 5_000 }).toBe(2);

    expect((await h.api.request('DELETE', `${VIRTUAL_KEYS}/${key.id}`)).status).toBe(200);

    expect(await storedOf(key.id)).toEqual([]);
    expect(await usageRowsOf(key.id)).toBe(2);
    const usage = await h.api.request<{ totals: { requests: number } }>(
      'GET',
      `${VIRTUAL_KEYS}/${key.id}/usage`,
    );
    expect(usage.body.data.totals.requests).toBe(2);
    expect(await storedOf(other.id)).toEqual([kept.id]);
    expect((await openaiClient(h.api, other.secret_key).responses.retrieve(kept.id)).id).toBe(kept.id);
  });

  it('a refused delete (the key still meters a project) deletes nothing', async () => {
    const key = await newKey();
    const stored = await openaiClient(h.api, key.secret_key).responses.create({
      model: model(),
      input: 'hi',
    });
    const project = await h.api.request('POST', '/api/agent-server/projects', {
      name: `p-${key.id}`,
      virtual_key_id: key.id,
    });
    expect(project.status).toBe(200);
    expect((await h.api.request('DELETE', `${VIRTUAL_KEYS}/${key.id}`)).status).toBe(409);
    expect(await storedOf(key.id)).toEqual([stored.id]);
  });

  it('a response whose stream ends after its key was deleted is not stored; its usage is', async () => {
    const key = await newKey();
    h.vendors.openai.script({ hold: true, reply: { text: 'first second third' } });
    const stream = await openaiClient(h.api, key.secret_key).responses.create({
      model: model(),
      input: 'count',
      stream: true,
    });
    const events: string[] = [];
    const reading = (async () => {
      for await (const e of stream) events.push(e.type);
    })();
    await h.vendors.openai.whenHeld();
    expect((await h.api.request('DELETE', `${VIRTUAL_KEYS}/${key.id}`)).status).toBe(200);
    h.vendors.openai.release();
    await reading;
    expect(events.at(-1)).toBe('response.completed');
    expect(await storedOf(key.id)).toEqual([]);
    await expect.poll(() => usageRowsOf(key.id), { timeout: 5_000 }).toBe(1);
  });

  it('a store that was waiting for the deleting transaction stores nothing once it commits', async () => {
    const key = await newKey();
    const keys = new VirtualKeysRepository(db());
    const responses = new GatewayResponsesRepository(db());
    const trx = await db().transaction();
    let settled = false;
    let pending: Promise<boolean> | undefined;
    try {
      // What the service's delete does: lock the key, then delete it and its responses.
      expect(await keys.lockById(key.id, trx)).toBeDefined();
      pending = responses
        .insert(
          {
            id: `resp_${key.id.replaceAll('-', '')}`,
            virtual_key_id: key.id,
            model: 'm',
            status: 'completed',
            input_items: [{ type: 'message', role: 'user', content: 'secret' }],
            output_items: [],
            usage: null,
            response: {},
            created_at: new Date(),
          },
          30,
        )
        .finally(() => (settled = true));
      await sleep(300);
      // The write is under way and waits for the key's row.
      expect(settled).toBe(false);
      expect(await keys.softDelete(key.id, trx)).toBe(true);
      expect(await responses.deleteByKey(key.id, trx)).toBe(0);
      await trx.commit();
    } catch (err) {
      await trx.rollback();
      throw err;
    }
    expect(await pending).toBe(false);
    expect(await storedOf(key.id)).toEqual([]);
  });
});
