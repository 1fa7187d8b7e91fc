import Joi from 'joi';
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

export const mcpServerCreate = {
  query: Joi.object(projectQuery),
  body: Joi.object({
    name: name.required(),
    endpoint: endpoint.required(),
    headers: headers.default({}),
    transport: transport.default('streamable_http'),
  }).required(),
};
export const mcpServerList = { query: Joi.object({ ...projectQuery, ...pagination }) };
export const mcpServerGet = { params: idParams, query: Joi.object(optionalProjectQuery) };
export const mcpServerUpdate = {
  params: idParams,
  query: Joi.object(optionalProjectQuery),
  body: Joi.object({ name, endpoint: sentBackUri(endpoint), headers, transport })
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
}
export type McpServerUpdateBody = Partial<McpServerCreateBody>;

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
  created_at: timestamp,
  updated_at: timestamp,
});
export const mcpServerListResponse = Joi.array().items(mcpServerResponse);
export const mcpInspectResponse = Joi.object({
  tools: Joi.array().items(
    Joi.object({ name: Joi.string(), description: Joi.string(), input_schema: Joi.object() }),
  ),
});
