import type { Knex } from 'knex';

/**
 * Agent skills: a folder (SKILL.md plus any files) stored per agent, mounted
 * read-only in the agent's sandboxes. A skill row carries what lists need
 * (description, counts, content hash) so listing and the worker's "anything
 * changed?" check never read file contents; the files are bytea rows of their
 * own. Both cascade with the agent. New tables only: additive.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('agent_skills', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('agent_id').notNullable().references('id').inTable('agents').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('description').notNullable();
    t.integer('file_count').notNullable();
    t.integer('total_bytes').notNullable();
    // sha256 (hex) over the sorted paths, modes and contents: unchanged uploads are no-ops, and
    // the worker names materialized folders after it.
    t.text('content_hash').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['agent_id', 'name']);
  });
  await knex.schema.createTable('agent_skill_files', (t) => {
    t.uuid('skill_id').notNullable().references('id').inTable('agent_skills').onDelete('CASCADE');
    // Relative to the skill folder, '/'-separated, validated (no '..', not absolute).
    t.text('path').notNullable();
    t.binary('content').notNullable();
    t.integer('size').notNullable();
    t.boolean('executable').notNullable().defaultTo(false);
    t.primary(['skill_id', 'path']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('agent_skill_files');
  await knex.schema.dropTableIfExists('agent_skills');
}
