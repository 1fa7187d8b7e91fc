import type Joi from 'joi';
import { createRequire } from 'node:module';
import type { RegisteredRoute } from '../http/api-router.js';
import { STATUS_MESSAGES } from '../../core/errors.js';

type JsonSchema = Record<string, unknown>;

// joi-to-json is CommonJS exporting the function itself (its typings say otherwise).
const parse = createRequire(import.meta.url)('joi-to-json') as (
  schema: Joi.Schema,
  mode: 'open-api-3.1',
) => unknown;

const toSchema = (schema: Joi.Schema): JsonSchema => parse(schema, 'open-api-3.1') as JsonSchema;

/** `/prompts/:name/versions/:version` → `/prompts/{name}/versions/{version}` */
export const toOpenApiPath = (koaPath: string) => koaPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

function envelope(data: JsonSchema, error: boolean): JsonSchema {
  return {
    type: 'object',
    required: ['error', 'message', 'data', 'status', 'errorDetails'],
    properties: {
      error: { type: 'boolean', const: error },
      message: { type: 'string' },
      data,
      status: { type: 'integer' },
      errorDetails: { type: 'object' },
    },
  };
}

const errorResponse = (status: number, raw = false) => ({
  description: STATUS_MESSAGES[status] ?? 'Error',
  content: {
    'application/json': { schema: { $ref: `#/components/schemas/${raw ? 'ErrorDetail' : 'ErrorEnvelope'}` } },
  },
});

/** A door's own answer (`raw`) is documented as it is; the configuration API's inside the envelope. */
function okContent(route: RegisteredRoute): Record<string, unknown> {
  if (route.produces) return { description: 'OK', content: { [route.produces]: {} } };
  const data = route.response ? toSchema(route.response) : { type: 'object' };
  return {
    description: 'OK',
    content: { 'application/json': { schema: route.raw ? data : envelope(data, false) } },
  };
}

function parameters(route: RegisteredRoute): JsonSchema[] {
  const out: JsonSchema[] = [];
  for (const where of ['params', 'query'] as const) {
    const schema = route.request?.[where];
    if (!schema) continue;
    const json = toSchema(schema) as { properties?: Record<string, JsonSchema>; required?: string[] };
    for (const [name, prop] of Object.entries(json.properties ?? {})) {
      out.push({
        name,
        in: where === 'params' ? 'path' : 'query',
        required: where === 'params' || (json.required ?? []).includes(name),
        schema: prop,
      });
    }
  }
  return out;
}

/** The OpenAPI 3.1 document of every route registered through ApiRouter. */
export function buildOpenApi(routes: RegisteredRoute[], info: { version: string }): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const op: Record<string, unknown> = {
      tags: [route.tag],
      summary: route.summary,
      operationId: `${route.method}${route.fullPath.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}`,
      parameters: parameters(route),
      responses: {
        200: okContent(route),
        [route.raw ? 422 : 400]: errorResponse(route.raw ? 422 : 400, route.raw),
        ...(route.fullPath.includes(':') ? { 404: errorResponse(404, route.raw) } : {}),
        500: errorResponse(500, route.raw),
      },
    };
    // Optional security: open mode takes no credential unless ADMIN_TOKEN is set; users mode always asks one.
    const schemes = route.apiKeyHeader
      ? [{ adminToken: [] }, { apiKey: [] }, { session: [] }, {}]
      : [{ adminToken: [] }, { session: [] }, {}];
    // A door with a credential of its own (SCIM) takes that one alone.
    op.security = route.public ? [] : route.ownCredential ? [{ scimToken: [] }] : schemes;
    // What the caller must hold in users mode (core/auth/roles.ts).
    op['x-permission'] = route.permission;
    if (!route.public) {
      (op.responses as Record<number, unknown>)[401] = errorResponse(401, route.raw);
      (op.responses as Record<number, unknown>)[403] = errorResponse(403, route.raw);
    }
    if (route.description) op.description = route.description;
    if (route.request?.body) {
      const content: Record<string, unknown> = {
        'application/json': { schema: toSchema(route.request.body) },
      };
      for (const type of route.consumes ?? []) content[type] = {};
      op.requestBody = { required: true, content };
    }
    (paths[toOpenApiPath(route.fullPath)] ??= {})[route.method] = op;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent Gateway Service',
      version: info.version,
      description: 'Agent server and LLM gateway: configuration API, gateway, converse and traces.',
    },
    // Relative to where the document is served, so one cached document fits every host, port and proxy prefix-free
    // deployment; the paths themselves are absolute (`/api/agent-server/…`).
    servers: [{ url: '/', description: 'The server that serves this document' }],
    paths,
    components: {
      schemas: {
        ErrorEnvelope: envelope({ type: 'object' }, true),
        ErrorDetail: {
          type: 'object',
          required: ['detail'],
          description: "The Agent Protocol's error: a message, or the list of fields a request got wrong",
          properties: { detail: {} },
        },
      },
      securitySchemes: {
        adminToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API token (users mode), or ADMIN_TOKEN when the server sets one. In users mode each operation needs ' +
            'the permission its `x-permission` names: public, signed-in, org:read, org:admin, or ' +
            'project:read|operate|develop|admin in the project the request is about.',
        },
        scimToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            'SCIM_TOKEN: the credential of /scim/v2, and of nothing else (no user permission applies there)',
        },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: 'ags_session',
          description: "The console's session (users mode); changes also need the x-csrf-token header",
        },
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'x-api-key',
          description:
            'ADMIN_TOKEN as the Agent Protocol clients send it (their apiKey), when the server sets one',
        },
      },
    },
  };
}
