import type { AppDeps } from '../deps.js';
import { ApiRouter } from '../http/api-router.js';
import { ok } from '../http/envelope.js';
import type { Validated } from '../middleware/validate.js';
import { VirtualKeysRepository } from '../../core/repositories/virtual-keys.repository.js';
import type { Page } from '../schemas/common.schemas.js';
import * as s from '../schemas/virtual-keys.schemas.js';
import { VirtualKeysService } from '../services/virtual-keys.service.js';
import { RunWaitsService } from '../services/run-waits.service.js';

type Id = { id: string };

export function virtualKeyRoutes(deps: AppDeps): ApiRouter {
  const waits = new RunWaitsService(deps);
  const keys = new VirtualKeysService(new VirtualKeysRepository(deps.db), deps.db, () =>
    deps.gatewayKeys.clear(),
  );
  return new ApiRouter('/api/agent-server/virtual-keys', 'VirtualKeys')
    .access({ read: 'org:admin', write: 'org:admin' })
    .route<Validated<never, never, s.VirtualKeyCreateBody>>(
      {
        method: 'post',
        path: '/',
        summary: 'Create a virtual key',
        description:
          '`secret_key` is returned in this response only; the server keeps its SHA-256. Each grant names an ' +
          'existing provider and the model ids it may call (`["*"]` = all). `fallbacks` is an ordered list of ' +
          '`<provider name>/<model id>`; `expires_at` must be in the future.',
        request: s.virtualKeyCreate,
        response: s.virtualKeyWithSecretResponse,
      },
      async (ctx, { body }) => ok(ctx, await keys.create(body)),
    )
    .route<Validated<never, Page>>(
      {
        method: 'get',
        path: '/',
        summary: 'List virtual keys, newest first',
        request: s.virtualKeyList,
        response: s.virtualKeyListResponse,
      },
      async (ctx, { query }) => ok(ctx, await keys.list(query)),
    )
    .route<Validated<Id>>(
      {
        method: 'get',
        path: '/:id',
        summary: 'Get a virtual key',
        request: s.virtualKeyGet,
        response: s.virtualKeyResponse,
      },
      async (ctx, { params }) => ok(ctx, await keys.get(params.id)),
    )
    .route<Validated<Id, never, s.VirtualKeyUpdateBody>>(
      {
        method: 'patch',
        path: '/:id',
        summary: 'Update a virtual key',
        description:
          '`providers`, when given, replaces every grant. `null` clears `expires_at`, `rate_limit` or `budget`. ' +
          'The secret is changed only by `POST /virtual-keys/{id}/rotate`.',
        request: s.virtualKeyUpdate,
        response: s.virtualKeyResponse,
      },
      async (ctx, { params, body }) => {
        const key = await keys.update(params.id, body);
        // A raised budget wakes the runs waiting on it.
        if (body.budget !== undefined) await waits.wake('key', params.id);
        ok(ctx, key);
      },
    )
    .route<Validated<Id>>(
      {
        method: 'post',
        path: '/:id/rotate',
        summary: 'Rotate the secret of a virtual key',
        description:
          'Returns a new `secret_key` (shown once); the old secret stops working on the next request.',
        request: s.virtualKeyRotate,
        response: s.virtualKeyWithSecretResponse,
      },
      async (ctx, { params }) => ok(ctx, await keys.rotate(params.id)),
    )
    .route<Validated<Id>>(
      {
        method: 'delete',
        path: '/:id',
        summary: 'Delete a virtual key',
        description:
          'Revokes it at once and hides it (get, list, update and rotate answer 404; its name can be reused). ' +
          'Its usage is kept and stays readable at `GET /virtual-keys/{id}/usage`. ' +
          "A key still set as a project's `virtual_key_id` is a 409 naming the projects.",
        request: s.virtualKeyDelete,
      },
      async (ctx, { params }) => {
        await keys.delete(params.id);
        ok(ctx, {});
      },
    );
}
