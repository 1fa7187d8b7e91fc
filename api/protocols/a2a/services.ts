import { A2aPushConfigsRepository } from '../../../core/repositories/a2a-push-configs.repository.js';
import { A2aTasksRepository } from '../../../core/repositories/a2a-tasks.repository.js';
import { ConversationsRepository } from '../../../core/repositories/conversations.repository.js';
import { McpOAuthRepository } from '../../../core/repositories/mcp-oauth.repository.js';
import { RunsRepository } from '../../../core/repositories/runs.repository.js';
import type { AppDeps } from '../../deps.js';
import { ConverseService } from '../../services/converse.service.js';
import { RunCancelService } from '../../services/run-cancel.service.js';
import { RunEventsHub } from '../../services/run-events-hub.js';
import { RunWaitsService } from '../../services/run-waits.service.js';

/** The services converse uses, which the A2A door translates to: built once per app. */
export interface A2aServices {
  deps: AppDeps;
  converse: ConverseService;
  cancels: RunCancelService;
  waits: RunWaitsService;
  runs: RunsRepository;
  tasks: A2aTasksRepository;
  conversations: ConversationsRepository;
  pushes: A2aPushConfigsRepository;
  /** The OAuth flows behind AUTH_REQUIRED's URLs: whether a person can still authorize at one. */
  oauthFlows: McpOAuthRepository;
}

export function a2aServices(deps: AppDeps): A2aServices {
  const cancels = new RunCancelService(deps);
  return {
    deps,
    converse: new ConverseService(deps, new RunEventsHub(deps.db, deps.changes)),
    cancels,
    waits: new RunWaitsService(deps, cancels),
    runs: new RunsRepository(deps.db),
    tasks: new A2aTasksRepository(deps.db),
    conversations: new ConversationsRepository(deps.db),
    pushes: new A2aPushConfigsRepository(deps.db),
    oauthFlows: new McpOAuthRepository(deps.db),
  };
}
