import type { AppDeps } from '../../deps.js';
import type { ApiRouter } from '../../http/api-router.js';
import { scimMounted } from './door.js';
import { scimDiscoveryRoutes } from './discovery.routes.js';
import { scimGroupRoutes } from './groups.routes.js';
import { scimUserRoutes } from './users.routes.js';

/** SCIM 2.0's routers (README.md), or none when it is not served (open mode without SCIM_TOKEN). */
export function scimRouters(deps: AppDeps): ApiRouter[] {
  if (!scimMounted(deps.config)) return [];
  return [scimUserRoutes(deps), scimGroupRoutes(deps), scimDiscoveryRoutes(deps)];
}
