import type { Knex } from 'knex';

/**
 * Agent tools on runs: the tools a turn offered the model (and why), and the
 * tool calls waiting for a person's approval. Additive; `down` removes exactly this.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    // { offered: [...], servers: [...], sandbox: {...} }: what the model could see this turn and why.
    t.jsonb('tools');
    // While status is awaiting_approval: the calls waiting, [{ id, name, step, arguments, ... }].
    t.jsonb('pending_approvals');
    // Every decision taken on this run's calls: [{ id, step, decision, by, at }].
    t.jsonb('approvals').notNullable().defaultTo('[]');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('approvals');
    t.dropColumn('pending_approvals');
    t.dropColumn('tools');
  });
}
