import type { Knex } from 'knex';
import type { ScopeBudget } from '../../budgets/types.js';
import type { JsonText, Timestamp } from './columns.js';

export const ConversationsTableName = 'conversations';

export type DbConversation = {
  /** Our key; `id` is the client's string, unique within the project. */
  pk: string;
  project_id: string;
  id: string;
  namespace: string;
  /** Template variables of the conversation's prompts. */
  context: Record<string, unknown>;
  /** What the conversation's turns may spend per period, beside the agent's and the key's; null: no limit. */
  budget: ScopeBudget | null;
  /** The Agent Protocol's thread metadata (searched by containment); {} for conversations made otherwise. */
  metadata: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
};
export type DbConversationInsert = Pick<DbConversation, 'project_id' | 'id'> &
  Partial<Pick<DbConversation, 'namespace'>> & {
    context?: DbConversation['context'] | JsonText;
    budget?: JsonText | null;
    metadata?: JsonText;
  };
export type DbConversationUpdate = Partial<Pick<DbConversation, 'namespace'>> & {
  context?: DbConversation['context'] | JsonText;
  budget?: JsonText | null;
  metadata?: JsonText;
  updated_at?: Timestamp;
};

export type ConversationsTable = Knex.CompositeTableType<
  DbConversation,
  DbConversationInsert,
  DbConversationUpdate
>;
