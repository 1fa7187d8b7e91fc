import Joi from 'joi';
import type { McpOAuthConfig } from '../../core/mcp/oauth/config.js';
import {
  idParams,
  name,
  optionalProjectQuery,
  pagination,
  projectQuery,
  sentBackUri,
  timestamp,
  uuid,
} from './common.schemas.js';

// RFC 9110 token characters; a RegExp key (not a joi schema) so the OpenAPI document gets `patternProperties`.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
// Values may not smuggle CR/LF into a request. joi's default pattern message
// quotes the value, which may be a credential: say what is wrong without it.
const headerValue = Joi.string()
  .max(8_192)
  .pattern(/^[^\r\n\0]*$/, 'single line')
  .messages({ 'string.pattern.name': '{{#label}} must be a single line without NUL characters' });

export const headers = Joi.object().pattern(HEADER_NAME, headerValue).max(50);

const endpoint = Joi.string()
  .uri({ scheme: ['http', 'https'] })
  .max(2_048);
const transport = Joi.string().valid('streamable_http', 'sse');

const scopeToken = Joi.string().pattern(/^[\x21\x23-\x5B\x5D-\x7E]{1,200}$/, 'scope token');
/** OAuth settings of the server's authorization server; every field optional (see docs/mcp-authorization.md). */
export const oauthSettings = Joi.object({
  client_id: Joi.string()
    .max(2_048)
    .pattern(/^[^\r\n\0]*$/, 'single line'),
  client_secret: Joi.string()
    .max(8_192)
    .pattern(/^[^\r\n\0]*$/, 'single line')
    .messages({ 'string.pattern.name': '{{#label}} must be a single line without NUL characters' })
    .description('write-only: comes back as "[redacted]"; sending "[redacted]" back keeps the stored one'),
  scopes: Joi.array().items(scopeToken).max(50),
  token_endpoint_auth_method: Joi.string().valid(
    'client_secret_basic',
    'client_secret_post',
    'none',
    'private_key_jwt',
  ),
  grant: Joi.string().valid('authorization_code', 'client_credentials'),
})
  .with('client_secret', 'client_id')
  .when(Joi.object({ grant: Joi.valid('client_credentials').required() }).unknown(), {
    then: Joi.object({ client_id: Joi.required(), client_secret: Joi.required() }),
  });
export const perUserTokens = Joi.boolean().description(
  'each end user authorizes on their own (POST …/authorize with end_user_id) instead of the project once',
);

export const mcpServerCreate = {
  query: Joi.object(projectQuery),
  body: Joi.object({
    name: name.required(),
    endpoint: endpoint.required(),
    headers: headers.default({}),
    transport: transport.default('streamable_http'),
    oauth: oauthSettings.allow(null),
    per_user_tokens: perUserTokens.default(false),
  }).required(),
};
export const mcpServerList = { query: Joi.object({ ...projectQuery, ...pagination }) };
export const mcpServerGet = { params: idParams, query: Joi.object(optionalProjectQuery) };
export const mcpServerUpdate = {
  params: idParams,
  query: Joi.object(optionalProjectQuery),
  body: Joi.object({
    name,
    endpoint: sentBackUri(endpoint),
    headers,
    transport,
    oauth: oauthSettings.allow(null),
    per_user_tokens: perUserTokens,
  })
    .min(1)
    .required(),
};
export const mcpServerDelete = mcpServerGet;
export const mcpServerInspect = mcpServerGet;

export interface McpServerCreateBody {
  name: string;
  endpoint: string;
  headers: Record<string, string>;
  transport: 'streamable_http' | 'sse';
  oauth?: McpOAuthConfig | null;
  per_user_tokens: boolean;
}
export type McpServerUpdateBody = Partial<McpServerCreateBody>;

export const authorizationView = Joi.object({
  status: Joi.string()
    .valid('not_configured', 'unauthorized', 'authorized')
    .description(
      "the project's own credentials: not_configured (the remote never asked for authorization and has no OAuth " +
        'settings), unauthorized (POST …/authorize to start), authorized',
    ),
  scopes: Joi.array().items(Joi.string()),
  expires_at: Joi.string().isoDate().allow(null),
});

export const mcpServerResponse = Joi.object({
  id: uuid,
  project_id: uuid,
  name: Joi.string(),
  endpoint: Joi.string().description(
    'credentials in the URL (user:pass@, ?api_key=…) come back as "[redacted]"; sending it back unchanged keeps them',
  ),
  headers: Joi.object()
    .pattern(Joi.string(), Joi.string())
    .description(
      'sensitive values come back as "[redacted]": by name (*auth*, *cookie*, *key*, *token*, *secret*, *pass*, ' +
        '*credential*, *session*, *signature*, *private*) or by value (an auth scheme such as "Bearer …", a JWT, ' +
        'a known key format such as "sk-…", a URL with credentials, a random-looking token of 20+ characters)',
    ),
  transport: transport,
  oauth: oauthSettings
    .allow(null)
    .description('the OAuth settings; client_secret comes back as "[redacted]"'),
  per_user_tokens: Joi.boolean(),
  authorization: authorizationView,
  protocol_version: Joi.string()
    .allow(null)
    .description(
      'the MCP protocol revision the server was last found to speak (e.g. "2026-07-28" or "2025-11-25"); ' +
        'null until a connection (a listing, a call, inspect) learnt it',
    ),
  created_at: timestamp,
  updated_at: timestamp,
});
export const mcpServerListResponse = Joi.array().items(mcpServerResponse);
export const mcpInspectResponse = Joi.object({
  tools: Joi.array().items(
    Joi.object({ name: Joi.string(), description: Joi.string(), input_schema: Joi.object() }),
  ),
});

export const mcpServerAuthorize = {
  params: idParams,
  query: Joi.object(optionalProjectQuery),
  body: Joi.object({
    end_user_id: Joi.string().min(1).max(256).description('only for a server with per_user_tokens'),
  }).default({}),
};
export interface McpServerAuthorizeBody {
  end_user_id?: string;
}
export const mcpServerAuthorizeResponse = Joi.object({
  authorization_url: Joi.string().description('the URL a person opens to authorize'),
  status: Joi.string()
    .valid('authorized')
    .description('a token was obtained without anyone (client_credentials, refresh)'),
});
export const mcpServerDeauthorize = {
  params: idParams,
  query: Joi.object({ ...optionalProjectQuery, end_user_id: Joi.string().min(1).max(256) }),
};
