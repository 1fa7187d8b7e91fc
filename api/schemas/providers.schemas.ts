import Joi from 'joi';
import { idParams, matching, pagination, sentBackUri, timestamp, uuid } from './common.schemas.js';
import type { ProviderType } from '../../core/db/tables/index.js';

export const PROVIDER_TYPES: readonly ProviderType[] = ['openai', 'anthropic', 'gemini'];

/** Provider names appear in gateway model names (`<provider>/<model>`), so they are slug-like. */
export const PROVIDER_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
export const providerName = matching(
  PROVIDER_NAME,
  '1 to 63 characters of lowercase letters, digits, "_" and "-", starting with a letter or digit',
);

/** What a header value looks like on the way back when it is sensitive (see redactHeaders). */
export const REDACTED = '[redacted]';

// RFC 9110 token characters for names; values may not smuggle CR/LF into a request.
// A RegExp key (not a joi schema) so the OpenAPI document gets `patternProperties`.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
// The default pattern message quotes the value, which may be a credential.
const headerValue = Joi.string()
  .max(8192)
  .pattern(/^[^\r\n\0]*$/, 'single-line value')
  .messages({ 'string.pattern.name': '{{#label}} must be a single line without NUL characters' });
const headers = Joi.object().pattern(HEADER_NAME, headerValue).max(50).allow(null);

const baseUrl = Joi.string()
  .uri({ scheme: ['http', 'https'] })
  .max(2048)
  .allow(null);
/** As read back: its credentials may be "[redacted]" (kept when the rest is unchanged). */
const sentBackBaseUrl = sentBackUri(
  Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .max(2048),
).allow(null);
const apiKey = Joi.string().min(1).max(4096).allow(null);
const connectTimeoutMs = Joi.number().integer().min(1).max(300_000);
const timeoutMs = Joi.number().integer().min(1).max(3_600_000);

export const providerCreate = {
  body: Joi.object({
    name: providerName.required(),
    provider_type: Joi.string()
      .valid(...PROVIDER_TYPES)
      .required(),
    base_url: baseUrl,
    api_key: apiKey,
    headers,
    connect_timeout_ms: connectTimeoutMs,
    timeout_ms: timeoutMs,
  }).required(),
};

export const providerList = { query: Joi.object({ ...pagination }) };
export const providerGet = { params: idParams };
export const providerUpdate = {
  params: idParams,
  body: Joi.object({
    name: providerName,
    provider_type: Joi.string().valid(...PROVIDER_TYPES),
    base_url: sentBackBaseUrl,
    api_key: apiKey,
    headers,
    connect_timeout_ms: connectTimeoutMs,
    timeout_ms: timeoutMs,
  })
    .min(1)
    .required(),
};
export const providerDelete = { params: idParams };

export interface ProviderCreateBody {
  name: string;
  provider_type: ProviderType;
  base_url?: string | null;
  api_key?: string | null;
  headers?: Record<string, string> | null;
  connect_timeout_ms?: number;
  timeout_ms?: number;
}
export type ProviderUpdateBody = Partial<ProviderCreateBody>;

/** What the API returns for a provider: never the key, and sensitive header values redacted. */
export interface Provider {
  id: string;
  name: string;
  provider_type: ProviderType;
  base_url: string | null;
  has_api_key: boolean;
  api_key_last4: string | null;
  headers: Record<string, string>;
  connect_timeout_ms: number;
  timeout_ms: number;
  created_at: string;
  updated_at: string;
}

export const providerResponse = Joi.object({
  id: uuid,
  name: Joi.string(),
  provider_type: Joi.string().valid(...PROVIDER_TYPES),
  base_url: Joi.string()
    .allow(null)
    .description(
      "the vendor SDK's base URL; null means the vendor's default. Credentials in it (user:pass@, ?key=…) " +
        `come back as "${REDACTED}"; sending it back unchanged keeps them`,
    ),
  has_api_key: Joi.boolean(),
  api_key_last4: Joi.string()
    .allow(null)
    .description('last 4 characters of the key, to tell keys apart (null for keys under 12 characters)'),
  headers: Joi.object()
    .pattern(/^/, Joi.string())
    .description(`extra request headers; sensitive values come back as "${REDACTED}"`),
  connect_timeout_ms: Joi.number().integer(),
  timeout_ms: Joi.number().integer(),
  created_at: timestamp,
  updated_at: timestamp,
});
export const providerListResponse = Joi.array().items(providerResponse);
