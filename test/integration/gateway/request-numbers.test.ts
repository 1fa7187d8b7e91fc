/**
 * A caller's numbers never make a call unmetered: the fields the gateway
 * meters by (output limits, choices) and the sampling numbers are checked
 * at the surface (a 400 in the vendor's shape naming the field, before
 * anything is counted or sent), and every call that reaches the vendor has
 * its usage row, whatever it asked or the vendor reported.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createVirtualKey, VIRTUAL_KEYS } from '../../helpers/factories/config.js';
import { billsAsWritten } from '../../fixtures/vendors/scripted-server.js';
import { FORMATS, startHarness, type Format, type Harness } from './gateway-harness.js';
import { chatRequest, expectShape } from './raw-requests.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() =>
  FORMATS.forEach((f) => {
    h.vendors[f].reset();
    // A vendor whose model writes all it is allowed to: 3e9 asked is 3e9 billed.
    h.vendors[f].billing = billsAsWritten(16_384);
  }),
);

const model = (f: Format) => `${h.providers[f].name}/m`;
const keyWithoutLimits = () =>
  createVirtualKey(h.api, {
    providers: FORMATS.map((f) => ({ provider_id: h.providers[f].id, model_names: ['*'] })),
  });

async function usageRequests(keyId: string): Promise<number> {
  const res = await h.api.request<{ totals: { requests: number } }>('GET', `${VIRTUAL_KEYS}/${keyId}/usage`);
  return res.body.data.totals.requests;
}

/** The output-limit field of each surface, set to `value`. */
const outputLimit = (f: Format, value: unknown): Record<string, unknown> =>
  f === 'gemini' ? { generationConfig: { maxOutputTokens: value } } : { max_tokens: value };
const outputField = (f: Format) => (f === 'gemini' ? 'generationConfig.maxOutputTokens' : 'max_tokens');

describe.each(FORMATS)('%s surface', (surface) => {
  it.each([3_000_000_000, 1e308, 0, -5, 12.5, '100'])(
    'refuses an output limit of %s with a 400 naming the field, sending nothing',
    async (value) => {
      const key = await keyWithoutLimits();
      const res = await chatRequest(h.api, surface, model(surface), {
        secret: key.secret_key,
        extra: outputLimit(surface, value),
      });
      expect(res.status).toBe(400);
      const message = expectShape(surface, await res.json());
      expect(message).toContain(outputField(surface));
      expect(h.vendors[surface].received).toHaveLength(0);
      expect(await usageRequests(key.id)).toBe(0);
    },
  );

  it('keeps the usage row of a call whose vendor reports more tokens than a row can count', async () => {
    const key = await keyWithoutLimits();
    h.vendors[surface].script({ reply: { text: 'long', usage: { input: 1e12, output: 5e9 } } });
    const res = await chatRequest(h.api, surface, model(surface), { secret: key.secret_key });
    expect(res.status).toBe(200);
    const usage = await h.api.request<{ totals: { requests: number; output_tokens: number } }>(
      'GET',
      `${VIRTUAL_KEYS}/${key.id}/usage`,
    );
    expect(usage.body.data.totals.requests).toBe(1);
    expect(usage.body.data.totals.output_tokens).toBe(2_147_483_647);
  });
});

describe('stream', () => {
  it.each(['openai', 'anthropic'] as const)(
    '%s: "stream": "yes" is a 400 naming stream, not a broken 500',
    async (surface) => {
      const key = await keyWithoutLimits();
      const res = await chatRequest(h.api, surface, model(surface), {
        secret: key.secret_key,
        extra: { stream: 'yes' },
      });
      expect(res.status).toBe(400);
      expect(expectShape(surface, await res.json())).toContain('stream');
      expect(h.vendors[surface].received).toHaveLength(0);
    },
  );
});

describe('n and candidateCount', () => {
  it('refuses choices out of the vendor range', async () => {
    const key = await keyWithoutLimits();
    const openai = await chatRequest(h.api, 'openai', model('openai'), {
      secret: key.secret_key,
      extra: { n: 1000 },
    });
    expect(openai.status).toBe(400);
    expect(((await openai.json()) as { error: { param: string } }).error.param).toBe('n');
    const gemini = await chatRequest(h.api, 'gemini', model('gemini'), {
      secret: key.secret_key,
      extra: { generationConfig: { candidateCount: 0 } },
    });
    expect(gemini.status).toBe(400);
    expect(expectShape('gemini', await gemini.json())).toContain('candidateCount');
  });
});

/** Every numeric field of each surface's chat request, where it goes in the body. */
const NUMERIC_FIELDS: Record<Format, Array<(v: number) => Record<string, unknown>>> = {
  openai: ['max_tokens', 'max_completion_tokens', 'n', 'temperature', 'top_p', 'seed'].map(
    (k) => (v: number) => ({ [k]: v }),
  ),
  anthropic: ['max_tokens', 'temperature', 'top_p', 'top_k'].map((k) => (v: number) => ({ [k]: v })),
  gemini: ['maxOutputTokens', 'candidateCount', 'temperature', 'topP', 'topK', 'seed'].map(
    (k) => (v: number) => ({ generationConfig: { [k]: v } }),
  ),
};

const anyNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(
    0,
    1,
    2,
    128,
    2_147_483_647,
    2_147_483_648,
    3e9,
    1e15,
    1e308,
    -1e308,
    Number.MAX_SAFE_INTEGER,
  ),
  fc.integer({ min: 1, max: 20_000 }),
);

describe('property: arbitrary numbers never lose a usage row', () => {
  it.each(FORMATS)(
    '%s: every call that reached the vendor has its row; every other is a 400',
    async (surface) => {
      const key = await keyWithoutLimits();
      let reached = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(fc.integer({ min: 0, max: 99 }), anyNumber), { minLength: 1, maxLength: 3 }),
          async (fields) => {
            const setters = NUMERIC_FIELDS[surface];
            const extra: Record<string, unknown> = {};
            for (const [i, v] of fields) {
              const part = setters[i % setters.length]!(v);
              if (part.generationConfig)
                extra.generationConfig = { ...(extra.generationConfig as object), ...part.generationConfig };
              else Object.assign(extra, part);
            }
            const before = h.vendors[surface].received.length;
            const res = await chatRequest(h.api, surface, model(surface), { secret: key.secret_key, extra });
            await res.arrayBuffer();
            const sent = h.vendors[surface].received.length > before;
            if (sent) reached++;
            // Refused by the gateway (nothing sent) or by the vendor: a 4xx; otherwise answered.
            expect(sent ? [200, 400] : [400]).toContain(res.status);
          },
        ),
        { numRuns: 40 },
      );
      expect(reached).toBeGreaterThan(0);
      expect(await usageRequests(key.id)).toBe(reached);
    },
    60_000,
  );
});
