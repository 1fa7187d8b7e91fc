/** The `finishTurn` activity: the turn's outcome on its run, once. */
import type { FinishTurnArgs } from '../../workflows/session.definitions.js';
import { closeRun } from './run-outcome.js';
import type { SessionDeps } from './types.js';

export function createFinishActivities(deps: SessionDeps) {
  return {
    /** Records the turn's outcome on the run and announces it; a second call changes nothing. */
    async finishTurn(args: FinishTurnArgs): Promise<void> {
      await closeRun(deps.db, args);
    },
  };
}
