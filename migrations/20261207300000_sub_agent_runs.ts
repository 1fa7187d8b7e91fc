import type { Knex } from 'knex';

/**
 * Runs of sub-agents (an agent calling another agent of its project as a tool):
 * - `runs.parent_run_id`: the run whose tool call started this one (null for
 *   every other run); indexed, partially, for a run's list of children. A
 *   parent deleted with its conversation leaves its children unlinked.
 * - `runs.budget_scopes`: `[{scope, scope_id}]`, the budgets beside its own
 *   agent's and conversation's that the run's spend counts against (a
 *   sub-agent's run: its callers' agents and conversations); `[]` for every
 *   existing run. A GIN index finds a budget's inherited runs.
 * - `budget_reservations`' key gains `scope_id`: one model call of a
 *   sub-agent holds its worst case against several agents' budgets.
 *
 * Adding nullable or defaulted columns and empty-ish indexes does not rewrite
 * `runs`; the reservations table holds only calls in flight.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.uuid('parent_run_id').nullable().references('id').inTable('runs').onDelete('SET NULL');
    t.jsonb('budget_scopes').notNullable().defaultTo('[]');
  });
  await knex.raw(
    'create index runs_parent_run_index on runs (parent_run_id) where parent_run_id is not null',
  );
  await knex.raw(
    `create index runs_budget_scopes_index on runs using gin (budget_scopes jsonb_path_ops)
       where budget_scopes <> '[]'::jsonb`,
  );
  await knex.raw('alter table budget_reservations drop constraint budget_reservations_pkey');
  await knex.raw(
    'alter table budget_reservations add constraint budget_reservations_pkey primary key (run_id, step, scope, scope_id)',
  );
}

export async function down(knex: Knex): Promise<void> {
  // Calls in flight hold one reservation per scope again: the extra ones are let go.
  await knex.raw(`delete from budget_reservations b using budget_reservations o
    where b.run_id = o.run_id and b.step = o.step and b.scope = o.scope and b.scope_id > o.scope_id`);
  await knex.raw('alter table budget_reservations drop constraint budget_reservations_pkey');
  await knex.raw(
    'alter table budget_reservations add constraint budget_reservations_pkey primary key (run_id, step, scope)',
  );
  await knex.raw('drop index if exists runs_budget_scopes_index');
  await knex.raw('drop index if exists runs_parent_run_index');
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('budget_scopes');
    t.dropColumn('parent_run_id');
  });
}
