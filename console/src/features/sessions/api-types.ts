import type { paths } from '../../api/schema.js';

/** The `data` of a 200 answer of one operation, as the generated schema types it. */
export type Data<P extends keyof paths, M extends 'get' | 'post' = 'get'> = paths[P][M] extends {
  responses: { 200: { content: { 'application/json': { data: infer D } } } };
}
  ? D
  : never;

export type Conversation = Data<'/api/agent-server/conversations'>[number];
export type ConversationDetail = Data<'/api/agent-server/conversations/{conversation_id}'>;
export type Thread = Data<'/api/agent-server/conversations/{conversation_id}/threads'>[number];
export type Message = Data<'/api/agent-server/threads/{id}/messages'>[number];
export type Summary = Data<'/api/agent-server/threads/{id}/summaries'>[number];
export type Run = Data<'/api/agent-server/conversations/{conversation_id}/runs'>[number];
export type Agent = Data<'/api/agent-server/agents'>[number];
