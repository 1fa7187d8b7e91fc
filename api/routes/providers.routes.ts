import type { AppDeps } from '../deps.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import { ProvidersRepository } from '../../core/repositories/providers.repository.js';
import type { Page } from '../schemas/common.schemas.js';
import * as s from '../schemas/providers.schemas.js';
import { ProvidersService } from '../services/providers.service.js';

type Id = { id: string };

const SECRETS_NOTE =
  '`api_key` is write-only and encrypted at rest: responses carry `has_api_key` and `api_key_last4`. ' +
  'Header values are encrypted at rest; sensitive ones (authorization, cookies, names containing key, token, secret) ' +
  `come back as "${s.REDACTED}".`;

export function providerRoutes(deps: AppDeps): ApiRouter {
  const providers = new ProvidersService(
    new ProvidersRepository(deps.db),
    deps.db,
    deps.secrets,
    deps.logger,
  );
  return new ApiRouter('/api/agent-server/providers', 'Providers')
    .access({ read: 'org:admin', write: 'org:admin' })
    .route<Validated<never, never, s.ProviderCreateBody>>(
      {
        method: 'post',
        path: '/',
        summary: 'Create a provider',
        description:
          `${SECRETS_NOTE} \`base_url\` is what the vendor's official SDK takes as its base URL; an \`openai\` ` +
          'provider with a `base_url` serves any OpenAI-compatible endpoint. Defaults: `connect_timeout_ms` 10000, `timeout_ms` 600000.',
        request: s.providerCreate,
        response: s.providerResponse,
      },
      async (ctx, { body }) => ok(ctx, await providers.create(body)),
    )
    .route<Validated<never, Page>>(
      {
        method: 'get',
        path: '/',
        summary: 'List providers, newest first',
        request: s.providerList,
        response: s.providerListResponse,
      },
      async (ctx, { query }) => ok(ctx, await providers.list(query)),
    )
    .route<Validated<Id>>(
      {
        method: 'get',
        path: '/:id',
        summary: 'Get a provider',
        request: s.providerGet,
        response: s.providerResponse,
      },
      async (ctx, { params }) => ok(ctx, await providers.get(params.id)),
    )
    .route<Validated<Id, never, s.ProviderUpdateBody>>(
      {
        method: 'patch',
        path: '/:id',
        summary: 'Update a provider (rotate its key with `api_key`)',
        description:
          `${SECRETS_NOTE} \`headers\` replaces the whole map (\`null\` clears it); a value of "${s.REDACTED}" keeps ` +
          "the stored value, so a map read back can be sent back. Renaming rewrites the virtual keys' fallbacks that name it.",
        request: s.providerUpdate,
        response: s.providerResponse,
      },
      async (ctx, { params, body }) => ok(ctx, await providers.update(params.id, body)),
    )
    .route<Validated<Id>>(
      {
        method: 'delete',
        path: '/:id',
        summary: 'Delete a provider',
        description:
          'A provider still granted by a virtual key, named in its fallbacks or used by a model is a 409 naming them.',
        request: s.providerDelete,
      },
      async (ctx, { params }) => {
        await providers.delete(params.id);
        ok(ctx, {});
      },
    );
}
