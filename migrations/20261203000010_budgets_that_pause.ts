import type { Knex } from 'knex';

/**
 * Budgets on agents and conversations, and runs that wait instead of failing:
 * - `agents.budget`, `conversations.budget`: `{max_usd, max_tokens?, period, alert_at?}`;
 *   `agents.budget_wait_timeout_ms` cancels a run left waiting that long;
 * - `agents.non_idempotent_tools` (MCP tools named `server__tool` or `tool`) and
 *   `decision_timeout_ms`: a call of one whose outcome is unknown waits for a person;
 * - `runs.pause`: why a run waits, other than approval (`{reason, since, details}`),
 *   and the statuses `awaiting_budget` and `awaiting_decision`;
 * - `budget_reservations`: each model call's worst case held against the agent's and the
 *   conversation's budget while it runs (what runs cost so far is summed from `runs`);
 * - `budget_alerts`: each budget's threshold crossing, once per period (`budget.threshold`).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('agents', (t) => {
    t.jsonb('budget').nullable();
    t.integer('budget_wait_timeout_ms').nullable();
    t.jsonb('non_idempotent_tools').notNullable().defaultTo('[]');
    t.integer('decision_timeout_ms').nullable();
  });
  await knex.schema.alterTable('conversations', (t) => {
    t.jsonb('budget').nullable();
  });
  await knex.schema.alterTable('runs', (t) => {
    t.jsonb('pause').nullable();
  });
  await knex.raw('alter table runs drop constraint runs_status_check');
  await knex.raw(
    `alter table runs add constraint runs_status_check check (status in
      ('queued','running','awaiting_approval','awaiting_budget','awaiting_decision','completed','failed','cancelled'))`,
  );
  await knex.raw(
    `create index runs_awaiting_other_index on runs (project_id, created_at desc)
      where status in ('awaiting_budget', 'awaiting_decision')`,
  );
  await knex.schema.createTable('budget_reservations', (t) => {
    t.uuid('run_id').notNullable().references('id').inTable('runs').onDelete('CASCADE');
    t.integer('step').notNullable();
    t.text('scope').notNullable();
    t.uuid('scope_id').notNullable();
    t.decimal('usd', 18, 8).notNullable();
    t.bigInteger('tokens').notNullable();
    // A reservation left by a worker that died is ignored after this (its run's end also removes it).
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.primary(['run_id', 'step', 'scope']);
    t.index(['scope', 'scope_id']);
  });
  await knex.schema.createTable('budget_alerts', (t) => {
    t.text('scope').notNullable();
    t.uuid('scope_id').notNullable();
    t.timestamp('period_start', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['scope', 'scope_id', 'period_start']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('budget_alerts');
  await knex.schema.dropTable('budget_reservations');
  await knex.raw('drop index if exists runs_awaiting_other_index');
  // Runs that waited for a budget or a decision end as cancelled: the older check knows neither.
  await knex.raw(
    `update runs set status = 'cancelled' where status in ('awaiting_budget', 'awaiting_decision')`,
  );
  await knex.raw('alter table runs drop constraint runs_status_check');
  await knex.raw(
    `alter table runs add constraint runs_status_check check (status in
      ('queued','running','awaiting_approval','completed','failed','cancelled'))`,
  );
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('pause');
  });
  await knex.schema.alterTable('conversations', (t) => {
    t.dropColumn('budget');
  });
  await knex.schema.alterTable('agents', (t) => {
    t.dropColumn('decision_timeout_ms');
    t.dropColumn('non_idempotent_tools');
    t.dropColumn('budget_wait_timeout_ms');
    t.dropColumn('budget');
  });
}
