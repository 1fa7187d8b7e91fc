import type { Knex } from 'knex';

/**
 * The project's long-term memory store (the Agent Protocol's `/store`, and
 * the agents' memory tools): JSON items under a namespace path and a key,
 * with an optional expiry and the embedding of what was indexed.
 *
 * The embedding is a plain `float8[]` so the table is the same whether or
 * not the server has pgvector; where it has, searches cast it to `vector`
 * (core/repositories/memory-store.repository.ts, docs/memory-store.md).
 *
 * Projects choose the embedding model their store uses (set null when that
 * model is deleted), and agents may be offered the memory tools. New tables
 * and nullable or defaulted columns only: no rewrite of existing rows.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('store_items', (t) => {
    t.uuid('project_id').notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.specificType('namespace', 'text[]').notNullable();
    t.text('key').notNullable();
    t.jsonb('value').notNullable();
    t.specificType('embedding', 'float8[]');
    t.double('ttl_minutes');
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['project_id', 'namespace', 'key']);
  });
  // The housekeeping prune finds expired items without scanning the store.
  await knex.raw(
    'create index store_items_expires_at on store_items (expires_at) where expires_at is not null',
  );
  await knex.schema.alterTable('projects', (t) => {
    t.uuid('store_embedding_model_id').references('id').inTable('models').onDelete('SET NULL');
    t.integer('store_embedding_dims');
    t.specificType('store_embedding_fields', 'text[]');
  });
  await knex.schema.alterTable('agents', (t) => {
    t.boolean('memory_tools').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('agents', (t) => {
    t.dropColumn('memory_tools');
  });
  await knex.schema.alterTable('projects', (t) => {
    t.dropColumn('store_embedding_fields');
    t.dropColumn('store_embedding_dims');
    t.dropColumn('store_embedding_model_id');
  });
  await knex.schema.dropTable('store_items');
}
