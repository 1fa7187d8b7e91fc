import type { Knex } from 'knex';

/**
 * Indexes for the console's lists: a project's and an agent's runs newest
 * first, the runs waiting for a person across a project (a small partial
 * index: only paused runs are in it), and gateway usage by time across keys
 * (the usage series without a key filter). gateway_usage is append-only in
 * time order, so a BRIN index costs next to nothing per insert and stays a
 * few pages however large the table grows.
 *
 * Built concurrently (no transaction): runs and usage writes go on during the
 * build.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'create index concurrently if not exists runs_project_created_index on runs (project_id, created_at desc)',
  );
  await knex.raw(
    'create index concurrently if not exists runs_agent_created_index on runs (agent_id, created_at desc)',
  );
  await knex.raw(
    `create index concurrently if not exists runs_awaiting_index on runs (project_id, created_at desc)
      where status = 'awaiting_approval'`,
  );
  await knex.raw(
    'create index concurrently if not exists gateway_usage_created_brin on gateway_usage using brin (created_at)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists gateway_usage_created_brin');
  await knex.raw('drop index if exists runs_awaiting_index');
  await knex.raw('drop index if exists runs_agent_created_index');
  await knex.raw('drop index if exists runs_project_created_index');
}
