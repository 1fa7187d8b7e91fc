import type { AppDeps } from '../../deps.js';
import type { ApiRouter } from '../../http/api-router.js';
import { protocolRouter } from './door.js';

/** The Agent Protocol's crons routes. */
export function cronsRoutes(_deps: AppDeps): ApiRouter {
  return protocolRouter();
}
