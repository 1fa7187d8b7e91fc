import type { operations } from '../../api/schema.js';

/** The `data` of an operation's 200 answer, as the generated client types it. */
type Data<Op extends keyof operations> = operations[Op]['responses'] extends {
  200: { content: { 'application/json': { data: infer D } } };
}
  ? D
  : never;
type Item<T> = T extends readonly (infer U)[] ? U : T;

export type Agent = Item<Data<'getApiAgentServerAgents'>>;
export type Prompt = Item<Data<'getApiAgentServerPrompts'>>;
export type PromptVersion = Item<Data<'getApiAgentServerPromptsNameVersions'>>;
export type SchemaDoc = Data<'getApiAgentServerSchemasId'>;
export type Run = Data<'getApiAgentServerRunsRunId'>;
export type Thread = Item<Data<'getApiAgentServerConversationsConversationIdThreads'>>;
export type Message = Item<Data<'getApiAgentServerThreadsIdMessages'>>;
export type ConverseBody = NonNullable<
  operations['postApiAgentServerConverse']['requestBody']
>['content']['application/json'];
