import type { Knex } from 'knex';
import type { Timestamp } from './columns.js';

export const A2aAgentsTableName = 'a2a_agents';
export const A2aTaskCallsTableName = 'a2a_task_calls';

/** A remote A2A agent registered in a project: its agents may call it as tools. */
export type DbA2aAgent = {
  id: string;
  project_id: string;
  name: string;
  /** Where its agent card is served (e.g. https://host/.well-known/agent-card.json). */
  card_url: string;
  /** The headers sent with every request to it (the card's included), encrypted with SECRETS_KEY. */
  headers_enc: string | null;
  /** The OAuth settings (pre-registered client, scopes, grant), encrypted JSON; null: none given. */
  oauth_enc: string | null;
  /** Each end user authorizes on their own instead of the project once. */
  per_user_tokens: boolean;
  created_at: Date;
  updated_at: Date;
};
export type DbA2aAgentInsert = Pick<DbA2aAgent, 'project_id' | 'name' | 'card_url'> &
  Partial<Pick<DbA2aAgent, 'headers_enc' | 'oauth_enc' | 'per_user_tokens'>>;
export type DbA2aAgentUpdate = Partial<
  Pick<DbA2aAgent, 'name' | 'card_url' | 'headers_enc' | 'oauth_enc' | 'per_user_tokens'>
>;

export type A2aAgentsTable = Knex.CompositeTableType<
  DbA2aAgent,
  DbA2aAgentInsert,
  DbA2aAgentUpdate & { updated_at?: Timestamp }
>;

/** One tool call sent to a remote agent: written before sending, so a retry never sends twice. */
export type DbA2aTaskCall = {
  run_id: string;
  /** `<step>:<tool call id>`. */
  call_key: string;
  a2a_agent_id: string | null;
  /** The A2A message id we send, the same on every attempt. */
  message_id: string;
  /** The remote task, once the remote named it. */
  task_id: string | null;
  context_id: string | null;
  created_at: Date;
  updated_at: Date;
};
export type DbA2aTaskCallInsert = Pick<DbA2aTaskCall, 'run_id' | 'call_key' | 'message_id'> &
  Partial<Pick<DbA2aTaskCall, 'a2a_agent_id' | 'task_id' | 'context_id'>>;
export type A2aTaskCallsTable = Knex.CompositeTableType<
  DbA2aTaskCall,
  DbA2aTaskCallInsert,
  Partial<Pick<DbA2aTaskCall, 'task_id' | 'context_id'>> & { updated_at?: Timestamp }
>;
