import type { AppDeps } from '../../deps.js';
import type { ApiRouter } from '../../http/api-router.js';
import { assistantsRoutes } from './assistants.routes.js';
import { cronsRoutes } from './crons.routes.js';
import { runsRoutes } from './runs.routes.js';
import { storeRoutes } from './store.routes.js';
import { startDelayedTurn } from '../../services/delayed-turns.service.js';
import { metaRoutes } from './meta.routes.js';
import { doorServices } from './services.js';
import { threadsRoutes } from './threads.routes.js';

/** Every router of the Agent Protocol door (`/api/langgraph/{project_id}/…`). */
export function langGraphRouters(deps: AppDeps): ApiRouter[] {
  const door = doorServices(deps);
  return [
    metaRoutes(deps),
    assistantsRoutes(deps),
    threadsRoutes(deps, door),
    runsRoutes(deps, door, async (runId, seconds) => {
      await startDelayedTurn(deps, runId, seconds);
    }),
    cronsRoutes(deps),
    storeRoutes(deps),
  ];
}
