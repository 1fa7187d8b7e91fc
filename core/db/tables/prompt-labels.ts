import type { Knex } from 'knex';
import type { Timestamp } from './columns.js';

export const PromptLabelsTableName = 'prompt_labels';

/** Labels an agent may refer to. `latest` follows the newest version by itself. */
export const PROMPT_LABELS = ['production', 'latest'] as const;
export type PromptLabel = (typeof PROMPT_LABELS)[number];

/** A label sits on at most one version of a prompt. */
export type DbPromptLabel = {
  prompt_id: string;
  /** A PromptLabel when written by us; the column itself is plain text. */
  label: string;
  version_id: string;
  updated_at: Date;
};
export type DbPromptLabelInsert = Pick<DbPromptLabel, 'prompt_id' | 'label' | 'version_id'>;
export type DbPromptLabelUpdate = Partial<Pick<DbPromptLabel, 'version_id'>> & { updated_at?: Timestamp };

export type PromptLabelsTable = Knex.CompositeTableType<
  DbPromptLabel,
  DbPromptLabelInsert,
  DbPromptLabelUpdate
>;
