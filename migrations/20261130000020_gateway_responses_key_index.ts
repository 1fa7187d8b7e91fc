import type { Knex } from 'knex';

/**
 * Stored Responses API answers by virtual key: deleting a key now deletes its
 * stored responses in the delete's transaction, which holds the key's row
 * locked meanwhile, so finding them must not scan the whole table (30 days
 * of answers). Built concurrently (no transaction): responses are stored
 * during the build.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'create index concurrently if not exists gateway_responses_virtual_key_index on gateway_responses (virtual_key_id)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists gateway_responses_virtual_key_index');
}
