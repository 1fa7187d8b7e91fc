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

const errorResponse = (status: number) => ({
  description: STATUS_MESSAGES[status] ?? 'Error',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
});

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
        200: route.produces
          ? { description: 'OK', content: { [route.produces]: {} } }
          : {
              description: 'OK',
              content: {
                'application/json': {
                  schema: envelope(route.response ? toSchema(route.response) : { type: 'object' }, false),
                },
              },
            },
        400: errorResponse(400),
        ...(route.fullPath.includes(':') ? { 404: errorResponse(404) } : {}),
        500: errorResponse(500),
      },
    };
    // Optional security: the bearer token applies only when the server sets ADMIN_TOKEN.
    op.security = route.public ? [] : [{ adminToken: [] }, {}];
    if (!route.public) (op.responses as Record<number, unknown>)[401] = errorResponse(401);
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
      schemas: { ErrorEnvelope: envelope({ type: 'object' }, true) },
      securitySchemes: {
        adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN, when the server sets one' },
      },
    },
  };
}
