import type { Knex } from 'knex';

/**
 * Datasets: rows for evaluations, written by hand or uploaded (cases that
 * never happened in production). A dataset belongs to a project and goes with
 * it; its rows go with the dataset. `seq` keeps the order rows were added in
 * (an uploaded file reads back in its own order). New tables: no lock on an
 * existing one.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('datasets', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('project_id').notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('description');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['project_id', 'name']);
    t.index(['project_id', 'created_at']);
  });
  await knex.schema.createTable('dataset_rows', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('dataset_id').notNullable().references('id').inTable('datasets').onDelete('CASCADE');
    t.bigIncrements('seq', { primaryKey: false });
    // A user message: text (a JSON string) or content parts (an array).
    t.jsonb('input').notNullable();
    t.jsonb('context');
    t.jsonb('expected_output');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['dataset_id', 'seq']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('dataset_rows');
  await knex.schema.dropTable('datasets');
}
