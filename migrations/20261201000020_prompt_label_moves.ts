import type { Knex } from 'knex';

/**
 * Who moved a prompt's label, when, and from which version to which: one row
 * per move, written in the transaction that moves the label. Version numbers,
 * not ids: versions never change and go only with their prompt. `moved_by` is
 * the credential's name as text ("admin token", "local"), so users can be
 * named the same way later. A new table: no lock on an existing one.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('prompt_label_moves', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('project_id').notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.uuid('prompt_id').notNullable().references('id').inTable('prompts').onDelete('CASCADE');
    t.text('label').notNullable();
    // null: the label sat on no version before (its first assignment).
    t.integer('from_version');
    t.integer('to_version').notNullable();
    t.text('moved_by').notNullable();
    t.timestamp('moved_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['prompt_id', 'moved_at']);
    t.index(['project_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('prompt_label_moves');
}
