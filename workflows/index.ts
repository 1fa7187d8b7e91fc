/**
 * Every workflow the worker registers. Workflow code runs in Temporal's
 * deterministic sandbox: import activities as types only, no Node built-ins
 * (lint enforces it), no I/O.
 */
export { sessionWorkflow } from './session.workflow.js';
export { deleteConversationWorkflow } from './conversation-delete.workflow.js';
export { webhookDeliveryWorkflow } from './webhook-delivery.workflow.js';
export { copyWorkspaceWorkflow } from './workspace-copy.workflow.js';
export { evalWorkflow, evalCaseWorkflow } from './eval.workflow.js';
export { cronTurnWorkflow } from './cron-turn.workflow.js';
export { delayedTurnWorkflow } from './delayed-turn.workflow.js';
export { subAgentCallWorkflow } from './sub-agent-call.workflow.js';
