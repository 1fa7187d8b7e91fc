import type { Knex } from 'knex';
import type { Timestamp } from './columns.js';

export const PromptLabelMovesTableName = 'prompt_label_moves';

/** One move of a prompt's label, written with the move itself; goes with its prompt or project. */
export type DbPromptLabelMove = {
  id: string;
  project_id: string;
  prompt_id: string;
  label: string;
  /** null when the label sat on no version before. */
  from_version: number | null;
  to_version: number;
  /** The credential that moved it, by name ("admin token", "local"). */
  moved_by: string;
  moved_at: Date;
};
export type DbPromptLabelMoveInsert = Pick<
  DbPromptLabelMove,
  'project_id' | 'prompt_id' | 'label' | 'from_version' | 'to_version' | 'moved_by'
> & { moved_at?: Timestamp };
/** Moves are history: nothing updates them; the type exists for Knex's composite. */
export type DbPromptLabelMoveUpdate = Partial<DbPromptLabelMoveInsert>;

export type PromptLabelMovesTable = Knex.CompositeTableType<
  DbPromptLabelMove,
  DbPromptLabelMoveInsert,
  DbPromptLabelMoveUpdate
>;
