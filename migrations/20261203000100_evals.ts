import type { Knex } from 'knex';

/**
 * Evals: a change (prompt version, model, parameters) replayed over recorded
 * conversations or a dataset, one result row per user turn and variant.
 *
 * - `evals` goes with its project and its agent; `plan` holds the cases the
 *   workflow found at its start (their turn counts), so progress is known.
 * - `eval_results` is unique per (eval, variant, case, turn): the workflow's
 *   activities write each turn once, and a turn already written is not run
 *   again after a worker dies.
 * - `conversations.eval_id` marks an eval's scratch conversations (kept out of
 *   the conversations list); `runs.replay` tells the tool-call activities a run
 *   is a replay: which recorded run answers its tool calls.
 *
 * New tables and nullable columns without defaults: catalog changes only.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('evals', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('project_id').notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.uuid('agent_id').notNullable().references('id').inTable('agents').onDelete('CASCADE');
    t.jsonb('conversation_ids');
    t.uuid('dataset_id').references('id').inTable('datasets').onDelete('SET NULL');
    t.jsonb('variants').notNullable();
    t.integer('concurrency').notNullable();
    t.jsonb('judge');
    t.jsonb('thresholds');
    t.boolean('execute_diverged_tools').notNullable().defaultTo(false);
    t.text('status').notNullable().defaultTo('queued');
    t.jsonb('plan');
    t.jsonb('error');
    t.text('workflow_id').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('started_at', { useTz: true });
    t.timestamp('finished_at', { useTz: true });
    t.index(['project_id', 'created_at']);
  });
  await knex.schema.createTable('eval_results', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('eval_id').notNullable().references('id').inTable('evals').onDelete('CASCADE');
    t.integer('variant_index').notNullable();
    t.integer('case_index').notNullable();
    t.integer('turn_index').notNullable();
    // A recorded conversation's id, or a dataset row's.
    t.text('case_key').notNullable();
    t.text('status').notNullable();
    t.jsonb('input');
    t.jsonb('expected');
    t.jsonb('original');
    t.uuid('run_id');
    t.text('output');
    t.jsonb('structured');
    t.integer('input_tokens');
    t.integer('output_tokens');
    t.decimal('cost_usd', 20, 10);
    t.integer('latency_ms');
    t.boolean('exact_match');
    t.boolean('schema_valid');
    t.double('judge_score');
    t.text('judge_reason');
    t.jsonb('judge_usage');
    t.jsonb('error');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['eval_id', 'variant_index', 'case_index', 'turn_index']);
  });
  await knex.schema.alterTable('conversations', (t) => {
    t.uuid('eval_id');
  });
  await knex.schema.alterTable('runs', (t) => {
    t.jsonb('replay');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('replay');
  });
  await knex.schema.alterTable('conversations', (t) => {
    t.dropColumn('eval_id');
  });
  await knex.schema.dropTable('eval_results');
  await knex.schema.dropTable('evals');
}
