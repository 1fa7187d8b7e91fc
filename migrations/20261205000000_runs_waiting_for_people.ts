import type { Knex } from 'knex';

/**
 * Runs that wait for an MCP server's authorization or for a person's input:
 * - the statuses `awaiting_authorization` and `awaiting_input` (`runs.pause` says why);
 * - `runs.end_user_id`: the person a converse turn acts for (per-user MCP tokens);
 * - `agents.input_timeout_ms`, `agents.authorization_timeout_ms`: how long such a wait lasts;
 * - `run_input_requests`: each question an MCP server asked during a tool call,
 *   and its answer, so a call held open can be answered from any replica and a
 *   call made again after a worker restart is answered without asking twice.
 */
const BEFORE = `'queued','running','awaiting_approval','awaiting_budget','awaiting_decision','completed','failed','cancelled'`;
const AFTER = `'queued','running','awaiting_approval','awaiting_budget','awaiting_decision','awaiting_authorization','awaiting_input','completed','failed','cancelled'`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table runs drop constraint runs_status_check');
  await knex.raw(`alter table runs add constraint runs_status_check check (status in (${AFTER}))`);
  await knex.raw('drop index if exists runs_awaiting_other_index');
  await knex.raw(
    `create index runs_awaiting_other_index on runs (project_id, created_at desc)
      where status in ('awaiting_budget', 'awaiting_decision', 'awaiting_authorization', 'awaiting_input')`,
  );
  await knex.schema.alterTable('runs', (t) => {
    t.text('end_user_id').nullable();
  });
  await knex.schema.alterTable('agents', (t) => {
    t.integer('input_timeout_ms').nullable();
    t.integer('authorization_timeout_ms').nullable();
  });
  await knex.schema.createTable('run_input_requests', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('run_id').notNullable().references('id').inTable('runs').onDelete('CASCADE');
    t.integer('step').notNullable();
    t.text('call_id').notNullable();
    // The question's place among those one call asked (1, 2, …): the same on every attempt of the call.
    t.integer('seq').notNullable();
    t.jsonb('request').notNullable();
    t.jsonb('answer').nullable();
    // `held`: a call waits on it, connected; `released`: the call gave up waiting, the session waits.
    t.text('state').notNullable().defaultTo('held');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('answered_at', { useTz: true }).nullable();
    t.unique(['run_id', 'step', 'call_id', 'seq']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('run_input_requests');
  await knex.schema.alterTable('agents', (t) => {
    t.dropColumn('authorization_timeout_ms');
    t.dropColumn('input_timeout_ms');
  });
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('end_user_id');
  });
  // Runs that waited for authorization or input end as cancelled: the older check knows neither.
  await knex.raw(
    `update runs set status = 'cancelled' where status in ('awaiting_authorization', 'awaiting_input')`,
  );
  await knex.raw('drop index if exists runs_awaiting_other_index');
  await knex.raw(
    `create index runs_awaiting_other_index on runs (project_id, created_at desc)
      where status in ('awaiting_budget', 'awaiting_decision')`,
  );
  await knex.raw('alter table runs drop constraint runs_status_check');
  await knex.raw(`alter table runs add constraint runs_status_check check (status in (${BEFORE}))`);
}
