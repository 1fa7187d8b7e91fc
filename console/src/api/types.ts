/**
 * The API's types as the console uses them, every one derived from the
 * generated `schema.d.ts` (never hand-typed): a changed route changes them,
 * and the console's typecheck says where that matters.
 */
import type { operations } from './schema.js';

type Op = keyof operations;

/** The `data` of an operation's 200 answer, as the generated client types it. */
export type Data<O extends Op> = operations[O]['responses'] extends {
  200: { content: { 'application/json': { data: infer D } } };
}
  ? D
  : never;

/** The JSON body an operation takes. */
export type Body<O extends Op> = operations[O] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

/** The query parameters an operation takes. */
export type Query<O extends Op> = operations[O] extends { parameters: { query?: infer Q } }
  ? NonNullable<Q>
  : never;

/** One element of a list (anything else as it is). */
export type Item<T> = T extends readonly (infer U)[] ? U : T;

/**
 * One row of a list answer. The generated fields are optional (the joi
 * schemas do not mark them required), yet the API's rows always carry them.
 */
type Row<O extends Op> = Required<Item<Data<O>>>;

// Configuration
export type Project = Required<Data<'getApiAgentServerProjectsId'>>;
export type Provider = Row<'getApiAgentServerProviders'>;
export type Model = Row<'getApiAgentServerModels'>;
export type JsonSchemaDoc = Row<'getApiAgentServerSchemas'>;
export type McpServer = Row<'getApiAgentServerMcpServers'>;
export type A2aAgent = Row<'getApiAgentServerA2aAgents'>;
export type A2aAgentBody = Body<'postApiAgentServerA2aAgents'>;
/** What POST /a2a-agents/{id}/authorize answers, as for an MCP server: a URL for a person to open, or that it is already done. */
export type A2aAuthorizeResult = Data<'postApiAgentServerA2aAgentsIdAuthorize'>;
/** What POST /a2a-agents/{id}/inspect found on the card. */
export type A2aInspection = Data<'postApiAgentServerA2aAgentsIdInspect'>;
/** Whether the project holds OAuth credentials for an MCP server. */
export type McpAuthorization = NonNullable<McpServer['authorization']>;
/** What POST /mcp-servers/{id}/authorize answers: a URL for a person to open, or that it is already done. */
export type McpAuthorizeResult = Data<'postApiAgentServerMcpServersIdAuthorize'>;
export type McpTool = Required<Item<Required<Data<'postApiAgentServerMcpServersIdInspect'>>['tools']>>;
export type Agent = Row<'getApiAgentServerAgents'>;
export type Skill = Row<'getApiAgentServerAgentsIdSkills'>;
/** One write of an agent: its settings then, and whether they are the agent's now. */
export type AgentVersion = Row<'getApiAgentServerAgentsIdVersions'>;
export type VirtualKey = Row<'getApiAgentServerVirtualKeys'>;
export type VirtualKeyWithSecret = Required<Data<'postApiAgentServerVirtualKeys'>>;
export type Webhook = Row<'getApiAgentServerWebhooks'>;
export type WebhookWithSecret = Required<Data<'postApiAgentServerWebhooks'>>;
/** A warning about an agent's configuration, with the field it is about. */
export type AgentWarning = Required<Item<NonNullable<Data<'postApiAgentServerAgentsCheck'>['warnings']>>>;

export type ProviderBody = Body<'postApiAgentServerProviders'>;
export type ModelBody = Body<'postApiAgentServerModels'>;
export type SchemaBody = Body<'postApiAgentServerSchemas'>;
export type McpServerBody = Body<'postApiAgentServerMcpServers'>;
export type AgentBody = Body<'postApiAgentServerAgents'>;
export type AgentCheckBody = Body<'postApiAgentServerAgentsCheck'>;
export type VirtualKeyBody = Body<'postApiAgentServerVirtualKeys'>;
export type WebhookBody = Body<'postApiAgentServerWebhooks'>;

// Prompts
/** The labels a prompt version can carry, which agents choose their version by. */
export type PromptLabel = NonNullable<AgentBody['prompt_label']>;
/** The periods an agent's, a conversation's or a key's budget counts over. */
export type BudgetPeriod = NonNullable<AgentBody['budget']>['period'];
export type NewPrompt = Body<'postApiAgentServerPrompts'>;
export type Prompt = Row<'getApiAgentServerPrompts'>;
export type PromptVersion = Row<'getApiAgentServerPromptsNameVersions'>;
/** One move of a prompt's label: who, when, from which version to which. */
export type LabelMove = Row<'getApiAgentServerPromptsNameLabelHistory'>;

// Conversations and their runs
export type Conversation = Item<Data<'getApiAgentServerConversations'>>;
export type ConversationDetail = Data<'getApiAgentServerConversationsConversationId'>;
export type Thread = Item<Data<'getApiAgentServerConversationsConversationIdThreads'>>;
export type Message = Item<Data<'getApiAgentServerThreadsIdMessages'>>;
export type Summary = Item<Data<'getApiAgentServerThreadsIdSummaries'>>;
/** A run (one turn), as every run endpoint answers it: alone, or in a list of a conversation's or an agent's. */
export type Run = Data<'getApiAgentServerRunsRunId'>;
export type PendingApproval = Item<Data<'getApiAgentServerApprovals'>>;
/** Why a run waits (approval, budget, decision, authorization, input), since when, until when, and the reason's details. */
export type RunPause = NonNullable<Run['pause']>;
export type BudgetDecisionBody = Body<'postApiAgentServerRunsRunIdBudget'>;
export type ToolDecisionBody = Body<'postApiAgentServerRunsRunIdDecision'>;
/** A person's answer to the question an MCP server asked during a run's tool call. */
export type InputAnswerBody = Body<'postApiAgentServerRunsRunIdInput'>;
export type ConverseBody = Body<'postApiAgentServerConverse'>;
/** A conversation's budget as PATCH /conversations/{id} takes it. */
export type ConversationBudget = NonNullable<
  Body<'patchApiAgentServerConversationsConversationId'>['budget']
>;

// Evals
export type Eval = Data<'getApiAgentServerEvalsId'>;
export type EvalTotals = Required<Item<NonNullable<Eval['totals']>>>;
export type EvalResult = Item<Data<'getApiAgentServerEvalsIdResults'>>;
export type EvalBody = Body<'postApiAgentServerEvals'>;
export type EvalVariantBody = Item<EvalBody['variants']>;

// Traces
/** What GET /traces filters on, besides its time window and paging. */
export type TraceFilters = Omit<
  Query<'getApiAgentServerTraces'>,
  'start_time' | 'end_time' | 'limit' | 'offset'
>;
export type TraceSummary = Item<Data<'getApiAgentServerTraces'>>;
export type TraceDetail = Data<'getApiAgentServerTracesTraceId'>;
export type Span = Item<NonNullable<TraceDetail['spans']>>;
export type EndpointStat = Item<Data<'getApiAgentServerTracesStatsEndpoints'>>;
export type ModelStat = Item<Data<'getApiAgentServerTracesStatsModels'>>;
export type ServiceStat = Item<Data<'getApiAgentServerTracesStatsServices'>>;

// Usage
export type UsageSeries = Required<Data<'getApiAgentServerUsage'>>;
export type KeySeries = Required<Data<'getApiAgentServerVirtualKeysIdUsageSeries'>>;
export type KeyUsage = Required<Data<'getApiAgentServerVirtualKeysIdUsage'>>;

// Users mode
export type AuthConfig = Required<Data<'getApiAgentServerAuthConfig'>>;
export type Session = Data<'getApiAgentServerAuthSession'>;
export type LoginBody = Body<'postApiAgentServerAuthLogin'>;
export type SetupBody = Body<'postApiAgentServerAuthSetup'>;
export type User = Row<'getApiAgentServerUsers'>;
export type UserBody = Body<'postApiAgentServerUsers'>;
export type UserPatch = Body<'patchApiAgentServerUsersId'>;
export type OrgRole = User['org_role'];
export type Member = Row<'getApiAgentServerProjectsIdMembers'>;
export type ProjectRole = Member['role'];
export type ApiToken = Row<'getApiAgentServerTokens'>;
export type ApiTokenBody = Body<'postApiAgentServerTokens'>;
export type ApiTokenWithSecret = Required<Data<'postApiAgentServerTokens'>>;
export type AuditEvent = Item<Data<'getApiAgentServerAuditEvents'>>;
export type AuditFilters = Query<'getApiAgentServerAuditEvents'>;
