/**
 * The conversations a conversation's sub-agent calls ran in: each call of a
 * sub-agent runs its turn in a conversation of its own, linked by the run
 * (`runs.parent_run_id`), and a sub-agent may call its own. Deleting a
 * conversation takes them with it.
 */
import type { Knex } from 'knex';
import { ConversationsTableName, RunsTableName, type DbConversation } from '../db/tables/index.js';

/** A conversation of the tree, as deleting it needs it. */
export type TreeConversation = Pick<DbConversation, 'pk' | 'id' | 'project_id'>;

/** Calls nest a few levels (SUB_AGENT_MAX_DEPTH); this only stops a loop the data should never hold. */
const MAX_LEVELS = 64;

/**
 * The sub-agent conversations below `pk`, nearest first. With `lock`, inside
 * a transaction, each level's conversations and runs are locked FOR UPDATE
 * as they are found: a sub-agent run being linked to one of those runs
 * (its foreign key check) waits until the transaction ends, so the tree
 * cannot grow while it is deleted.
 */
export async function subAgentConversationsBelow(
  q: Knex | Knex.Transaction,
  pk: string,
  lock: boolean,
): Promise<TreeConversation[]> {
  const seen = new Set([pk]);
  const below: TreeConversation[] = [];
  let level = [pk];
  for (let depth = 0; level.length && depth < MAX_LEVELS; depth++) {
    if (lock) await q(RunsTableName).whereIn('conversation_pk', level).forUpdate().select('id');
    const children = await q(`${RunsTableName} as r`)
      .join(`${ConversationsTableName} as c`, 'c.pk', 'r.conversation_pk')
      .whereIn('r.parent_run_id', q(RunsTableName).whereIn('conversation_pk', level).select('id'))
      .distinct<TreeConversation[]>('c.pk', 'c.id', 'c.project_id');
    level = [];
    for (const c of children) {
      if (seen.has(c.pk)) continue;
      seen.add(c.pk);
      below.push(c);
      level.push(c.pk);
    }
    if (lock && level.length) await q(ConversationsTableName).whereIn('pk', level).forUpdate().select('pk');
  }
  return below;
}
