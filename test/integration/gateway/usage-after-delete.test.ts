/**
 * Usage of deleted keys (docs/security.md#virtual-keys). Deleting a key is a soft
 * delete: the key is revoked and hidden, its spending history stays readable
 * at /virtual-keys/{id}/usage, and a usage row queued for it still lands. A
 * row that can never be written (its key id is unknown) is dropped, counted
 * and logged, and never holds the rows of other keys hostage.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../core/logger.js';
import { UsageWriter, type UsageRow } from '../../../core/metering/usage-writer.js';
import { LogCapture } from '../../helpers/log-capture.js';
import { createProject } from '../../helpers/factories.js';
import {
  createProvider,
  createVirtualKey,
  PROVIDERS,
  VIRTUAL_KEYS,
  type VirtualKeyData,
} from '../../helpers/factories/config.js';
import { FORMATS, startHarness, type Harness } from './gateway-harness.js';
import { chatRequest } from './raw-requests.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() => FORMATS.forEach((f) => h.vendors[f].reset()));

const model = () => `${h.providers.openai.name}/m`;
const newKey = () =>
  createVirtualKey(h.api, { providers: [{ provider_id: h.providers.openai.id, model_names: ['*'] }] });

async function usageOf(id: string): Promise<{ status: number; requests: number | undefined }> {
  const res = await h.api.request<{ totals: { requests: number } }>('GET', `${VIRTUAL_KEYS}/${id}/usage`);
  return { status: res.status, requests: res.body.data?.totals?.requests };
}

async function call(secret: string): Promise<number> {
  const res = await chatRequest(h.api, 'openai', model(), { secret });
  await res.arrayBuffer();
  return res.status;
}

describe('a key deleted right after a call', () => {
  it("keeps its usage and does not hold other keys' rows hostage", async () => {
    const a = await newKey();
    const b = await newKey();
    expect(await call(a.secret_key)).toBe(200);
    expect(await call(b.secret_key)).toBe(200);
    // B's usage row is still queued in the writer (it flushes every 200 ms).
    expect((await h.api.request('DELETE', `${VIRTUAL_KEYS}/${b.id}`)).status).toBe(200);
    expect(await call(b.secret_key)).toBe(401);
    for (let i = 0; i < 3; i++) expect(await call(a.secret_key)).toBe(200);
    const c = await newKey();
    expect(await call(c.secret_key)).toBe(200);

    expect(await usageOf(a.id)).toEqual({ status: 200, requests: 4 });
    expect(await usageOf(c.id)).toEqual({ status: 200, requests: 1 });
    expect(await usageOf(b.id)).toEqual({ status: 200, requests: 1 });
    expect(h.api.server.deps.usage.droppedRows).toBe(0);
  });

  it('records the usage of a stream that ends after its key was deleted', async () => {
    const key = await newKey();
    h.vendors.openai.script({ hold: true, reply: { text: 'first second third' } });
    const res = await chatRequest(h.api, 'openai', model(), { secret: key.secret_key, stream: true });
    expect(res.status).toBe(200);
    await h.vendors.openai.whenHeld();
    expect((await h.api.request('DELETE', `${VIRTUAL_KEYS}/${key.id}`)).status).toBe(200);
    h.vendors.openai.release();
    expect(await res.text()).toContain('third');
    await expect.poll(async () => (await usageOf(key.id)).requests, { timeout: 5000 }).toBe(1);
  });
});

describe('DELETE /virtual-keys/{id} is a soft delete', () => {
  it('hides and revokes the key, keeps its row and usage, frees its name, and answers 404 to the rest', async () => {
    const key = await newKey();
    expect(await call(key.secret_key)).toBe(200);
    expect((await h.api.request('DELETE', `${VIRTUAL_KEYS}/${key.id}`)).status).toBe(200);

    const row = await h.api.server.deps.db('virtual_keys').where({ id: key.id }).first();
    expect(row?.deleted_at).toBeInstanceOf(Date);
    expect(await usageOf(key.id)).toEqual({ status: 200, requests: 1 });

    const path = `${VIRTUAL_KEYS}/${key.id}`;
    expect((await h.api.request('GET', path)).status).toBe(404);
    expect((await h.api.request('PATCH', path, { fallbacks: [] })).status).toBe(404);
    expect((await h.api.request('POST', `${path}/rotate`)).status).toBe(404);
    expect((await h.api.request('DELETE', path)).status).toBe(404);
    const listed = await h.api.request<VirtualKeyData[]>('GET', `${VIRTUAL_KEYS}?limit=200`);
    expect(listed.body.data.map((k) => k.id)).not.toContain(key.id);

    // A project cannot be pointed at it: it names no existing key.
    const project = await h.api.request('POST', '/api/agent-server/projects', {
      name: `p-${randomUUID()}`,
      virtual_key_id: key.id,
    });
    expect(project.status).toBe(400);
    expect(project.body.errorDetails.fields?.[0]?.field).toBe('virtual_key_id');
    const existing = await createProject(h.api);
    const patched = await h.api.request('PATCH', `/api/agent-server/projects/${existing.id}`, {
      virtual_key_id: key.id,
    });
    expect(patched.status).toBe(400);

    // The name is free again; the new key is a different key with its own (empty) usage.
    const again = await createVirtualKey(h.api, {
      name: key.name,
      providers: [{ provider_id: h.providers.openai.id, model_names: ['*'] }],
    });
    expect(again.id).not.toBe(key.id);
    expect(await usageOf(again.id)).toEqual({ status: 200, requests: 0 });
    expect(await usageOf(key.id)).toEqual({ status: 200, requests: 1 });
    expect((await h.api.request('GET', `${VIRTUAL_KEYS}/${randomUUID()}/usage`)).status).toBe(404);
  });

  it('does not let a deleted key hold on to its providers', async () => {
    const provider = await createProvider(h.api, { base_url: `${h.vendors.openai.url}/v1` });
    const key = await createVirtualKey(h.api, {
      providers: [{ provider_id: provider.id, model_names: ['*'] }],
      fallbacks: [`${provider.name}/m`],
    });
    expect((await h.api.request('DELETE', `${PROVIDERS}/${provider.id}`)).status).toBe(409);
    expect((await h.api.request('DELETE', `${VIRTUAL_KEYS}/${key.id}`)).status).toBe(200);
    expect((await h.api.request('DELETE', `${PROVIDERS}/${provider.id}`)).status).toBe(200);
  });
});

describe('UsageWriter with a row that can never be written', () => {
  const row = (virtualKeyId: string): UsageRow => ({
    virtual_key_id: virtualKeyId,
    provider_id: null,
    provider_name: 'p',
    model: 'm',
    input_tokens: 1,
    output_tokens: 1,
    cost_usd: 0,
    latency_ms: 1,
    status: 200,
    trace_id: null,
    created_at: new Date(),
  });
  const count = async (keyId: string) =>
    Number(
      (await h.api.server.deps.db('gateway_usage').where({ virtual_key_id: keyId }).count({ n: '*' }))[0]!.n,
    );

  it('writes the good rows of its batch and of later batches, and counts and logs the bad one', async () => {
    const logs = new LogCapture();
    const writer = new UsageWriter(h.api.server.deps.db, createLogger('info', logs), {
      flushMs: 60_000,
      maxBatch: 500,
      maxQueue: 20_000,
    });
    const good = await newKey();
    const other = await newKey();
    const ghost = randomUUID();
    await writer.add(row(good.id));
    await writer.add(row(ghost));
    await writer.add(row(good.id));
    await writer.flush();
    expect(await count(good.id)).toBe(2);
    expect(writer.droppedRows).toBe(1);
    const line = logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.level === 50);
    expect(line).toMatchObject({ virtual_key_id: ghost });

    await writer.add(row(other.id));
    await writer.add(row(good.id));
    await writer.flush();
    expect(await count(other.id)).toBe(1);
    expect(await count(good.id)).toBe(3);
    expect(writer.droppedRows).toBe(1);
    await writer.close();
  });

  it('keeps rows for the next flush when the database is unreachable, and writes them once it answers', async () => {
    const db = h.api.server.deps.db;
    let failures = 1;
    // The same Db, except that the next insert fails as a dropped connection does.
    const flaky = new Proxy(db, {
      get(target, prop, receiver) {
        if (prop === 'raw')
          return (...args: Parameters<typeof db.raw>) => {
            if (failures-- > 0)
              return Promise.reject(
                Object.assign(new Error('Connection terminated'), { code: 'ECONNRESET' }),
              );
            return target.raw(...args);
          };
        return Reflect.get(target, prop, receiver) as unknown;
      },
    });
    const writer = new UsageWriter(flaky, createLogger('silent'), {
      flushMs: 60_000,
      maxBatch: 500,
      maxQueue: 20_000,
    });
    const key = await newKey();
    await writer.add(row(key.id));
    await writer.flush();
    expect(await count(key.id)).toBe(0);
    expect(writer.droppedRows).toBe(0);
    await writer.flush();
    expect(await count(key.id)).toBe(1);
    await writer.close();
  });
});
