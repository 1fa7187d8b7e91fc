import type { AppDeps } from '../../deps.js';
import type { ApiRouter } from '../../http/api-router.js';
import { protocolRouter } from './door.js';

/** The Agent Protocol's threads routes. */
export function threadsRoutes(_deps: AppDeps): ApiRouter {
  return protocolRouter();
}
