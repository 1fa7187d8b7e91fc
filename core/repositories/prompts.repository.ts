import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import {
  AgentsTableName,
  PromptLabelMovesTableName,
  PromptLabelsTableName,
  PromptsTableName,
  PromptVersionsTableName,
  type DbPrompt,
  type DbPromptInsert,
  type DbPromptLabelMove,
  type DbPromptLabelMoveInsert,
  type DbPromptVersion,
  type DbPromptVersionInsert,
  type PromptLabel,
} from '../db/tables/index.js';
import type { Page } from './types.js';

/** A prompt with the version numbers its labels point at. */
export interface DbPromptSummary extends DbPrompt {
  latest_version: number;
  production_version: number | null;
}
/** A version with the labels it holds. */
export interface DbVersionWithLabels extends DbPromptVersion {
  labels: PromptLabel[];
}

/** Knex only. Methods that take `q` run inside the caller's transaction. */
export class PromptsRepository {
  constructor(readonly db: Db) {}

  transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** Up to two prompts of that name (enough to tell unique from ambiguous). */
  async findByName(name: string, projectId: string | undefined): Promise<DbPrompt[]> {
    const q = this.db(PromptsTableName).where({ name });
    if (projectId !== undefined) q.andWhere({ project_id: projectId });
    return q.select('*').orderBy('created_at').limit(2);
  }

  private summaries(q: Knex) {
    return q({ p: PromptsTableName }).select(
      'p.*',
      q.raw('(select max(v.version) from prompt_versions v where v.prompt_id = p.id)::int as latest_version'),
      q.raw(
        `(select v.version from prompt_labels l join prompt_versions v on v.id = l.version_id
           where l.prompt_id = p.id and l.label = 'production') as production_version`,
      ),
    );
  }

  async summary(id: string, q: Knex = this.db): Promise<DbPromptSummary> {
    const row = (await this.summaries(q).where('p.id', id).first()) as DbPromptSummary | undefined;
    return row!;
  }

  async list(projectId: string, page: Page): Promise<DbPromptSummary[]> {
    return (await this.summaries(this.db)
      .where('p.project_id', projectId)
      .orderBy([
        { column: 'p.created_at', order: 'desc' },
        { column: 'p.id', order: 'desc' },
      ])
      .limit(page.limit)
      .offset(page.offset)) as DbPromptSummary[];
  }

  async insertPrompt(q: Knex, row: DbPromptInsert): Promise<DbPrompt> {
    const [created] = await q(PromptsTableName).insert(row).returning('*');
    return created!;
  }

  /** Serialises writers of one prompt: version numbering and label moves happen under this lock. */
  async lock(q: Knex, id: string): Promise<DbPrompt | undefined> {
    return q(PromptsTableName).where({ id }).forUpdate().first();
  }

  async touch(q: Knex, id: string): Promise<void> {
    await q(PromptsTableName).where({ id }).update({ updated_at: q.fn.now() });
  }

  async maxVersion(q: Knex, promptId: string): Promise<number> {
    const row = (await q(PromptVersionsTableName)
      .where({ prompt_id: promptId })
      .max('version as max')
      .first()) as { max: number | null } | undefined;
    return row?.max ?? 0;
  }

  async insertVersion(q: Knex, row: DbPromptVersionInsert): Promise<DbPromptVersion> {
    const [created] = await q(PromptVersionsTableName).insert(row).returning('*');
    return created!;
  }

  /** Puts `label` on a version, taking it off whichever version held it (one row per prompt and label). */
  async setLabel(q: Knex, promptId: string, label: PromptLabel, versionId: string): Promise<void> {
    await q(PromptLabelsTableName)
      .insert({ prompt_id: promptId, label, version_id: versionId })
      .onConflict(['prompt_id', 'label'])
      .merge({ version_id: versionId, updated_at: q.fn.now() });
  }

  /** The number of the version `label` sits on, null when it sits on none. */
  async labelledVersion(q: Knex, promptId: string, label: PromptLabel): Promise<number | null> {
    const row = await q({ l: PromptLabelsTableName })
      .join({ v: PromptVersionsTableName }, 'v.id', 'l.version_id')
      .where({ 'l.prompt_id': promptId, 'l.label': label })
      .first<{ version: number } | undefined>('v.version');
    return row?.version ?? null;
  }

  /**
   * One move of a label, in the transaction that moves it (under the prompt's
   * lock). Stamped with the clock, not the transaction's start: a writer that
   * waited for the lock started earlier but moved later, and the history is
   * in the order the moves happened.
   */
  async recordLabelMove(q: Knex, move: Omit<DbPromptLabelMoveInsert, 'moved_at'>): Promise<void> {
    await q(PromptLabelMovesTableName).insert({ ...move, moved_at: q.raw('clock_timestamp()') });
  }

  /** A prompt's label moves, newest first. */
  async labelMoves(promptId: string, page: Page): Promise<DbPromptLabelMove[]> {
    return this.db(PromptLabelMovesTableName)
      .where({ prompt_id: promptId })
      .orderBy([
        { column: 'moved_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(page.limit)
      .offset(page.offset);
  }

  private versionsWithLabels(q: Knex) {
    return q({ v: PromptVersionsTableName }).select(
      'v.*',
      q.raw(
        `coalesce((select array_agg(l.label order by l.label desc) from prompt_labels l
             where l.version_id = v.id), '{}') as labels`,
      ),
    );
  }

  async findVersion(
    promptId: string,
    version: number,
    q: Knex = this.db,
  ): Promise<DbVersionWithLabels | undefined> {
    return (await this.versionsWithLabels(q)
      .where({ 'v.prompt_id': promptId, 'v.version': version })
      .first()) as DbVersionWithLabels | undefined;
  }

  /** The version the label points at (a label may be any text here: agents name theirs). */
  async versionByLabel(
    promptId: string,
    label: string,
  ): Promise<{ id: string; version: number; template: string } | undefined> {
    return await this.db('prompt_labels as l')
      .join('prompt_versions as v', 'v.id', 'l.version_id')
      .where({ 'l.prompt_id': promptId, 'l.label': label })
      .first<{ id: string; version: number; template: string } | undefined>(
        'v.id',
        'v.version',
        'v.template',
      );
  }

  /** Newest first. */
  async listVersions(promptId: string, page: Page): Promise<DbVersionWithLabels[]> {
    return (await this.versionsWithLabels(this.db)
      .where('v.prompt_id', promptId)
      .orderBy('v.version', 'desc')
      .limit(page.limit)
      .offset(page.offset)) as DbVersionWithLabels[];
  }

  /** Agents that use the prompt as their prompt or their summariser's. */
  async referencingAgents(q: Knex, promptId: string): Promise<Array<{ id: string; name: string }>> {
    return q(AgentsTableName)
      .where('prompt_id', promptId)
      .orWhere('llm_summarizer_prompt_id', promptId)
      .select('id', 'name')
      .orderBy('name');
  }

  /** Versions and labels go with it (ON DELETE CASCADE). */
  async deletePrompt(q: Knex, id: string): Promise<void> {
    await q(PromptsTableName).where({ id }).delete();
  }
}
