import type { AppDeps } from '../../deps.js';
import type { ApiRouter } from '../../http/api-router.js';
import { protocolRouter } from './door.js';

/** The Agent Protocol's runs routes. */
export function runsRoutes(_deps: AppDeps): ApiRouter {
  return protocolRouter();
}
