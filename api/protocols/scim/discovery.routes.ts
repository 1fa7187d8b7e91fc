import Joi from 'joi';
import type { Context } from 'koa';
import type { AppDeps } from '../../deps.js';
import type { ApiRouter } from '../../http/api-router.js';
import { ScimError } from './errors.js';
import { listResponse, locationOf, MAX_RESULTS, scimRouter, sendScim } from './door.js';
import { RESOURCE_TYPES, SCHEMAS } from './schemas.js';
import {
  RESOURCE_TYPE_SCHEMA,
  SCHEMA_SCHEMA,
  SCIM_CONTENT_TYPE,
  SERVICE_PROVIDER_CONFIG_SCHEMA,
} from './urns.js';

const idParams = Joi.object({ id: Joi.string().max(200).required() });

/**
 * SCIM's discovery (RFC 7644 §4): what this server supports, its resource
 * types and their schemas, read-only. Behind SCIM_TOKEN like the rest.
 */
export function scimDiscoveryRoutes(deps: AppDeps): ApiRouter {
  const location = (ctx: Context, path: string) => locationOf(ctx, deps.config.publicUrl, path);
  const resourceType = (ctx: Context, t: (typeof RESOURCE_TYPES)[number]) => ({
    schemas: [RESOURCE_TYPE_SCHEMA],
    ...t,
    schemaExtensions: [],
    meta: { resourceType: 'ResourceType', location: location(ctx, `/ResourceTypes/${t.id}`) },
  });
  const schema = (ctx: Context, s: (typeof SCHEMAS)[number]) => ({
    schemas: [SCHEMA_SCHEMA],
    ...s,
    meta: { resourceType: 'Schema', location: location(ctx, `/Schemas/${s.id}`) },
  });
  const one = <T extends { id: string }>(list: readonly T[], id: string, what: string): T => {
    const found = list.find((x) => x.id === id);
    if (!found) throw new ScimError(404, undefined, `${what} ${id} not found`);
    return found;
  };

  return scimRouter(deps, '')
    .route(
      {
        method: 'get',
        path: '/ServiceProviderConfig',
        summary: "SCIM's service provider configuration",
        produces: SCIM_CONTENT_TYPE,
      },
      (ctx) => {
        sendScim(ctx, {
          schemas: [SERVICE_PROVIDER_CONFIG_SCHEMA],
          patch: { supported: true },
          bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
          filter: { supported: true, maxResults: MAX_RESULTS },
          changePassword: { supported: false },
          sort: { supported: false },
          etag: { supported: false },
          authenticationSchemes: [
            {
              type: 'oauthbearertoken',
              name: 'Bearer token',
              description: 'The SCIM_TOKEN the server is configured with, as Authorization: Bearer',
              primary: true,
            },
          ],
          meta: { resourceType: 'ServiceProviderConfig', location: location(ctx, '/ServiceProviderConfig') },
        });
      },
    )
    .route(
      {
        method: 'get',
        path: '/ResourceTypes',
        summary: "SCIM's resource types",
        produces: SCIM_CONTENT_TYPE,
      },
      (ctx) =>
        sendScim(
          ctx,
          listResponse(
            RESOURCE_TYPES.map((t) => resourceType(ctx, t)),
            RESOURCE_TYPES.length,
            0,
          ),
        ),
    )
    .route(
      {
        method: 'get',
        path: '/ResourceTypes/:id',
        summary: 'One SCIM resource type (User, Group)',
        request: { params: idParams },
        produces: SCIM_CONTENT_TYPE,
      },
      (ctx, { params }: { params: { id: string } }) =>
        sendScim(ctx, resourceType(ctx, one(RESOURCE_TYPES, params.id, 'ResourceType'))),
    )
    .route(
      { method: 'get', path: '/Schemas', summary: "SCIM's schemas", produces: SCIM_CONTENT_TYPE },
      (ctx) =>
        sendScim(
          ctx,
          listResponse(
            SCHEMAS.map((s) => schema(ctx, s)),
            SCHEMAS.length,
            0,
          ),
        ),
    )
    .route(
      {
        method: 'get',
        path: '/Schemas/:id',
        summary: 'One SCIM schema, by its URN',
        request: { params: idParams },
        produces: SCIM_CONTENT_TYPE,
      },
      (ctx, { params }: { params: { id: string } }) =>
        sendScim(ctx, schema(ctx, one(SCHEMAS, params.id, 'Schema'))),
    );
}
