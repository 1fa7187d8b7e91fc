/**
 * Every table of the database (migrations/), one module each: its name, its
 * row as node-pg returns it, and what an insert and an update may send.
 * Registered here with Knex, so a query on a table by its name is
 * type-checked: a column that does not exist fails the typecheck.
 */

import type { ProjectsTable } from './projects.js';
import type { SecretsCheckTable } from './secrets-check.js';
import type { ProvidersTable } from './providers.js';
import type { VirtualKeysTable } from './virtual-keys.js';
import type { VirtualKeyGrantsTable } from './virtual-key-grants.js';
import type { ModelsTable } from './models.js';
import type { PromptsTable } from './prompts.js';
import type { PromptVersionsTable } from './prompt-versions.js';
import type { PromptLabelsTable } from './prompt-labels.js';
import type { PromptLabelMovesTable } from './prompt-label-moves.js';
import type { SchemasTable } from './schemas.js';
import type { McpServersTable } from './mcp-servers.js';
import type { McpOAuthCredentialsTable } from './mcp-oauth-credentials.js';
import type { McpOAuthFlowsTable } from './mcp-oauth-flows.js';
import type { AgentsTable } from './agents.js';
import type { AgentMcpServersTable } from './agent-mcp-servers.js';
import type { A2aAgentsTable, A2aTaskCallsTable } from './a2a-agents.js';
import type { ConversationsTable } from './conversations.js';
import type { ThreadsTable } from './threads.js';
import type { MessagesTable } from './messages.js';
import type { SpansTable } from './spans.js';
import type { GatewayRateWindowsTable } from './gateway-rate-windows.js';
import type { GatewayBudgetLedgerTable } from './gateway-budget-ledger.js';
import type { GatewayUsageTable } from './gateway-usage.js';
import type { RunsTable } from './runs.js';
import type { RunEventsTable } from './run-events.js';
import type { ThreadSummariesTable } from './thread-summaries.js';
import type { SkillsTable } from './agent-skills.js';
import type { SkillFilesTable } from './agent-skill-files.js';
import type { TraceRollupsTable } from './trace-rollups.js';
import type { GatewayResponsesTable } from './gateway-responses.js';
import type { GatewayBudgetLeasesTable } from './gateway-budget-leases.js';
import type { WebhooksTable } from './webhooks.js';
import type { A2aPushConfigsTable } from './a2a-push-configs.js';
import type { RunWebhooksTable } from './webhooks-runs.js';
import type { WebhookDeliveriesTable } from './webhooks-deliveries.js';
import type { DatasetRowsTable, DatasetsTable } from './datasets.js';
import type { BudgetAlertsTable, BudgetReservationsTable } from './budgets.js';
import type { RunInputRequestsTable } from './run-input-requests.js';

export type * from './columns.js';
export * from './projects.js';
export * from './secrets-check.js';
export * from './providers.js';
export * from './virtual-keys.js';
export * from './virtual-key-grants.js';
export * from './models.js';
export * from './prompts.js';
export * from './prompt-versions.js';
export * from './prompt-labels.js';
export * from './prompt-label-moves.js';
export * from './schemas.js';
export * from './mcp-servers.js';
export * from './mcp-oauth-credentials.js';
export * from './mcp-oauth-flows.js';
export * from './agents.js';
export * from './agent-mcp-servers.js';
export * from './a2a-agents.js';
// agent-versions.ts registers its table with Knex itself.
export * from './agent-versions.js';
export * from './conversations.js';
export * from './threads.js';
export * from './messages.js';
export * from './spans.js';
export * from './gateway-rate-windows.js';
export * from './gateway-budget-ledger.js';
export * from './gateway-usage.js';
export * from './runs.js';
export * from './run-events.js';
export * from './thread-summaries.js';
export * from './agent-skills.js';
export * from './agent-skill-files.js';
export * from './trace-rollups.js';
export * from './gateway-responses.js';
export * from './gateway-budget-leases.js';
export * from './webhooks.js';
export * from './webhooks-runs.js';
export * from './webhooks-deliveries.js';
export * from './a2a-push-configs.js';
export * from './datasets.js';
// evals.ts registers its tables with Knex itself.
export * from './evals.js';
export * from './budgets.js';
export * from './run-input-requests.js';
// crons.ts registers its table with Knex itself.
export * from './crons.js';
// store-items.ts registers its table with Knex itself.
export * from './store-items.js';
// users.ts registers users mode's tables with Knex itself.
export * from './users.js';

declare module 'knex/types/tables.js' {
  interface Tables {
    projects: ProjectsTable;
    secrets_check: SecretsCheckTable;
    providers: ProvidersTable;
    virtual_keys: VirtualKeysTable;
    virtual_key_grants: VirtualKeyGrantsTable;
    models: ModelsTable;
    prompts: PromptsTable;
    prompt_versions: PromptVersionsTable;
    prompt_labels: PromptLabelsTable;
    prompt_label_moves: PromptLabelMovesTable;
    schemas: SchemasTable;
    mcp_servers: McpServersTable;
    mcp_oauth_credentials: McpOAuthCredentialsTable;
    mcp_oauth_flows: McpOAuthFlowsTable;
    agents: AgentsTable;
    agent_mcp_servers: AgentMcpServersTable;
    a2a_agents: A2aAgentsTable;
    a2a_task_calls: A2aTaskCallsTable;
    conversations: ConversationsTable;
    threads: ThreadsTable;
    messages: MessagesTable;
    spans: SpansTable;
    gateway_rate_windows: GatewayRateWindowsTable;
    gateway_budget_ledger: GatewayBudgetLedgerTable;
    gateway_usage: GatewayUsageTable;
    runs: RunsTable;
    run_events: RunEventsTable;
    thread_summaries: ThreadSummariesTable;
    agent_skills: SkillsTable;
    agent_skill_files: SkillFilesTable;
    trace_rollups: TraceRollupsTable;
    gateway_responses: GatewayResponsesTable;
    gateway_budget_leases: GatewayBudgetLeasesTable;
    webhooks: WebhooksTable;
    run_webhooks: RunWebhooksTable;
    webhook_deliveries: WebhookDeliveriesTable;
    a2a_push_configs: A2aPushConfigsTable;
    datasets: DatasetsTable;
    dataset_rows: DatasetRowsTable;
    budget_reservations: BudgetReservationsTable;
    budget_alerts: BudgetAlertsTable;
    run_input_requests: RunInputRequestsTable;
  }
}
