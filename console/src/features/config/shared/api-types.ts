import type { operations } from '../../../api/schema.js';

/** The `data` of an operation's 200 answer, as the generated client types it. */
export type Data<Op extends keyof operations> = operations[Op]['responses'] extends {
  200: { content: { 'application/json': { data: infer D } } };
}
  ? D
  : never;

/** The JSON body an operation takes. */
export type Body<Op extends keyof operations> = operations[Op] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

type Item<T> = T extends readonly (infer U)[] ? U : T;
/** One row of a list answer; the generated fields are optional, rows always carry them. */
type Row<Op extends keyof operations> = Required<Item<Data<Op>>>;

export type Provider = Row<'getApiAgentServerProviders'>;
export type Model = Row<'getApiAgentServerModels'>;
export type JsonSchemaDoc = Row<'getApiAgentServerSchemas'>;
export type McpServer = Row<'getApiAgentServerMcpServers'>;
export type McpTool = Required<Item<Required<Data<'postApiAgentServerMcpServersIdInspect'>>['tools']>>;
export type Agent = Row<'getApiAgentServerAgents'>;
export type Skill = Row<'getApiAgentServerAgentsIdSkills'>;
export type VirtualKey = Row<'getApiAgentServerVirtualKeys'>;
export type VirtualKeyWithSecret = Required<Data<'postApiAgentServerVirtualKeys'>>;
export type Prompt = Row<'getApiAgentServerPrompts'>;

export type ProviderBody = Body<'postApiAgentServerProviders'>;
export type ModelBody = Body<'postApiAgentServerModels'>;
export type SchemaBody = Body<'postApiAgentServerSchemas'>;
export type McpServerBody = Body<'postApiAgentServerMcpServers'>;
export type AgentBody = Body<'postApiAgentServerAgents'>;
export type VirtualKeyBody = Body<'postApiAgentServerVirtualKeys'>;
