/**
 * What a caller is told when the egress policy (docs/security.md, "Outgoing
 * connections") stands between the gateway and a provider: its own code,
 * `egress_denied`, in each surface's error shape — for a provider whose
 * base_url is refused (403: retrying cannot help) and for a provider that
 * answers with a redirect to a refused address (502: the provider's answer
 * is unusable). Never `model_not_found`, never "no response body".
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import { modelFailure } from '../../../activities/session/failures.js';
import { complete } from '../../../core/llm/client.js';
import { createProvider, createVirtualKey, type ProviderData } from '../../helpers/factories/config.js';
import { startOpenAiVendor } from '../../fixtures/vendors/openai.js';
import type { ScriptedVendor } from '../../fixtures/vendors/scripted-server.js';
import { anthropicClient, openaiClient, startHarness, type Format, type Harness } from './gateway-harness.js';
import { chatRequest } from './raw-requests.js';

const METADATA_DENIAL =
  'egress to 169.254.169.254:80 is denied by the built-in EGRESS_DENY entry for link-local addresses and cloud metadata';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() => h.vendors.openai.reset());

/** A key granting every model of one provider. */
const keyFor = async (provider: ProviderData) =>
  (await createVirtualKey(h.api, { providers: [{ provider_id: provider.id, model_names: ['*'] }] }))
    .secret_key;

/** The code each shape carries, read the way each shape's clients read it. */
async function codeAndMessage(surface: Format, res: Response) {
  const body = (await res.json()) as { error: Record<string, unknown> };
  if (surface === 'openai') return { code: body.error.code, message: body.error.message };
  if (surface === 'anthropic')
    return {
      code: (body.error.details as { error_code?: string } | undefined)?.error_code,
      type: body.error.type,
      message: body.error.message,
    };
  const info = (body.error.details as Array<Record<string, unknown>> | undefined)?.find(
    (d) => d['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo',
  );
  return { code: info?.reason, status: body.error.status, message: body.error.message };
}

describe('a provider whose base_url the egress policy refuses', () => {
  let provider: ProviderData;
  let secret: string;
  beforeAll(async () => {
    // Timeouts far beyond the test's: an attempt to connect would hang it.
    provider = await createProvider(h.api, {
      provider_type: 'openai',
      base_url: 'http://169.254.169.254/v1',
      connect_timeout_ms: 300_000,
      timeout_ms: 300_000,
    });
    secret = await keyFor(provider);
  });

  it('is a 403 egress_denied through the official OpenAI SDK (Chat Completions and Responses)', async () => {
    const client = openaiClient(h.api, secret);
    const chat = await client.chat.completions
      .create({ model: `${provider.name}/m`, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(chat).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(chat).toMatchObject({ status: 403, code: 'egress_denied' });
    expect((chat as Error).message).toContain(METADATA_DENIAL);

    const responses = await client.responses
      .create({ model: `${provider.name}/m`, input: 'hi' })
      .catch((e: unknown) => e);
    expect(responses).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(responses).toMatchObject({ status: 403, code: 'egress_denied' });
  });

  it('is a 403 egress_denied through the official Anthropic SDK (error.details.error_code)', async () => {
    const err = await anthropicClient(h.api, secret)
      .messages.create({
        model: `${provider.name}/m`,
        max_tokens: 10,
        messages: [{ role: 'user', content: 'hi' }],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect(err).toMatchObject({ status: 403, type: 'permission_error', errorCode: 'egress_denied' });
    expect((err as { apiMessage: string }).apiMessage).toBe(METADATA_DENIAL);
  });

  it('is a 403 in every surface’s shape, with egress_denied where that shape keeps a code', async () => {
    const seen = [];
    for (const surface of ['openai', 'anthropic', 'gemini'] as const) {
      const res = await chatRequest(h.api, surface, `${provider.name}/m`, { secret });
      expect(res.status).toBe(403);
      seen.push(await codeAndMessage(surface, res));
    }
    expect(seen).toEqual([
      { code: 'egress_denied', message: METADATA_DENIAL },
      { code: 'egress_denied', type: 'permission_error', message: METADATA_DENIAL },
      { code: 'EGRESS_DENIED', status: 'PERMISSION_DENIED', message: METADATA_DENIAL },
    ]);
  });
});

describe('a provider that redirects', () => {
  let provider: ProviderData;
  let secret: string;
  beforeAll(async () => {
    provider = h.providers.openai;
    secret = await keyFor(provider);
  });

  const refusedRedirect = (host: string, reason: string) =>
    `${provider.name}: upstream redirected to ${host}, which the egress policy refuses (${reason})`;

  it('to the metadata address: 502 egress_denied on every surface, not retried, nothing followed', async () => {
    const seen = [];
    for (const surface of ['openai', 'anthropic', 'gemini'] as const) {
      h.vendors.openai.reset();
      h.vendors.openai.script({
        redirect: { status: 302, location: 'http://169.254.169.254/latest/meta-data/iam/' },
      });
      const res = await chatRequest(h.api, surface, `${provider.name}/m`, { secret });
      expect(res.status).toBe(502);
      seen.push(await codeAndMessage(surface, res));
      // Not an outage: no retry (a retry would get the same redirect).
      expect(h.vendors.openai.received).toHaveLength(1);
    }
    const message = refusedRedirect('169.254.169.254:80', METADATA_DENIAL);
    expect(seen).toEqual([
      { code: 'egress_denied', message },
      { code: 'egress_denied', type: 'api_error', message },
      { code: 'EGRESS_DENIED', status: 'UNAVAILABLE', message },
    ]);
  });

  it("a 307 to the platform's PostgreSQL through the official OpenAI SDK: 502 egress_denied naming it", async () => {
    const pgPort = new URL(h.api.config.databaseUrl!).port || '5432';
    h.vendors.openai.script({ redirect: { status: 307, location: `http://localhost:${pgPort}/` } });
    const err = await openaiClient(h.api, secret)
      .chat.completions.create({ model: `${provider.name}/m`, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect(err).toMatchObject({ status: 502, code: 'egress_denied' });
    expect((err as Error).message).toBe(
      `502 ${refusedRedirect(
        `localhost:${pgPort}`,
        `egress to localhost:${pgPort} is denied by the built-in EGRESS_DENY entry for the platform's PostgreSQL (DATABASE_URL)`,
      )}`,
    );
  });

  it('to a permitted address: 502 saying redirects are not followed (not "no response body")', async () => {
    const other = await startOpenAiVendor();
    try {
      h.vendors.openai.script({ redirect: { status: 308, location: `${other.url}/v1/chat/completions` } });
      const res = await chatRequest(h.api, 'openai', `${provider.name}/m`, { secret });
      expect(res.status).toBe(502);
      const { code, message } = await codeAndMessage('openai', res);
      expect(code).not.toBe('egress_denied');
      expect(message).toBe(
        `${provider.name}: upstream answered 308, a redirect to ${new URL(other.url).host}; redirects are not followed (set the provider's base_url to the final address)`,
      );
      expect(other.received).toHaveLength(0);
    } finally {
      await other.close();
    }
  });
});

describe("an agent session's model call redirected to a refused address", () => {
  let vendor: ScriptedVendor;
  beforeAll(async () => {
    vendor = await startOpenAiVendor();
  });
  afterAll(() => vendor.close());

  it('fails the turn with a non-retryable egress_denied naming the redirect', async () => {
    vendor.script({ redirect: { status: 302, location: 'http://169.254.169.254/' } });
    const target = {
      name: 'vendor-x',
      type: 'openai' as const,
      base_url: `${vendor.url}/v1`,
      api_key: 'sk-test',
      headers: {},
      connect_timeout_ms: 5_000,
      timeout_ms: 10_000,
    };
    const err = await complete(target, {
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    }).catch((e: unknown) => e);
    const failure = modelFailure(err);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({
      type: 'egress_denied',
      nonRetryable: true,
      message: `vendor-x: upstream redirected to 169.254.169.254:80, which the egress policy refuses (${METADATA_DENIAL})`,
    });
  });
});
