import { ConversationForkRepository } from '../../../core/repositories/conversation-fork.repository.js';
import { ConversationsRepository } from '../../../core/repositories/conversations.repository.js';
import { ProtocolThreadsRepository } from '../../../core/repositories/protocol-threads.repository.js';
import type { AppDeps } from '../../deps.js';
import { ConversationForkService } from '../../services/conversation-fork.service.js';
import { ConversationsService } from '../../services/conversations.service.js';
import { ConverseService } from '../../services/converse.service.js';
import { RunCancelService } from '../../services/run-cancel.service.js';
import { RunEventsHub } from '../../services/run-events-hub.js';
import { RunWaitsService } from '../../services/run-waits.service.js';
import { temporalUiUrl } from '../../services/runs.service.js';
import { ThreadViews } from './threads.js';

/** How long a thread's deletion, or a copy's workspace, may take before the answer is a 503 (they go on). */
const WORKFLOW_WAIT_MS = 60_000;

/** The services converse uses, which the Agent Protocol translates to: built once per app. */
export interface DoorServices {
  repo: ProtocolThreadsRepository;
  views: ThreadViews;
  conversations: ConversationsService;
  forks: ConversationForkService;
  converse: ConverseService;
  cancels: RunCancelService;
  waits: RunWaitsService;
}

export function doorServices(deps: AppDeps): DoorServices {
  const repo = new ProtocolThreadsRepository(deps.db);
  const workflows = {
    client: deps.temporal.client,
    taskQueue: deps.config.temporalTaskQueue,
    waitMs: WORKFLOW_WAIT_MS,
    logger: deps.logger,
  };
  const cancels = new RunCancelService(deps);
  return {
    repo,
    views: new ThreadViews(repo),
    conversations: new ConversationsService(
      new ConversationsRepository(deps.db),
      (workflowId) => temporalUiUrl(deps.config, workflowId),
      workflows,
    ),
    forks: new ConversationForkService(
      new ConversationForkRepository(deps.db),
      new ConversationsRepository(deps.db),
      workflows,
    ),
    converse: new ConverseService(deps, new RunEventsHub(deps.db, deps.changes)),
    cancels,
    waits: new RunWaitsService(deps, cancels),
  };
}
