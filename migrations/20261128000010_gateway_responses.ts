import type { Knex } from 'knex';

/**
 * Stored answers of the gateway's Responses API (`POST /v1/responses` with
 * `store` on, the default), so `previous_response_id`, `GET` and `DELETE
 * /v1/responses/{id}` work from any replica. A row belongs to the virtual
 * key that created it; it is invisible once `expires_at` has passed
 * (GATEWAY_RESPONSES_RETENTION_DAYS after it was written) and a periodic
 * sweep deletes it. `input_items` is the whole conversation the response
 * answered (the previous response's input and output expanded), so a chain
 * needs one row read per turn and an expired or deleted ancestor does not
 * break its descendants. A new table: nothing to lock or backfill.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('gateway_responses', (t) => {
    // `resp_…`, made by the gateway.
    t.text('id').primary();
    t.uuid('virtual_key_id').notNullable().references('id').inTable('virtual_keys').onDelete('CASCADE');
    t.text('model').notNullable();
    // completed | incomplete (failed answers are not stored).
    t.text('status').notNullable();
    t.jsonb('input_items').notNullable();
    t.jsonb('output_items').notNullable();
    // In the Responses shape (input_tokens, output_tokens, total_tokens, details); null when none was reported.
    t.jsonb('usage');
    // The rest of the response object as answered (what it echoes of its request: instructions,
    // tools, text, metadata…; incomplete_details): with the columns above, what GET returns.
    t.jsonb('response').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    // The sweep's range scan. Lookups are by id; a key's rows are found only through a cascade
    // (keys are soft-deleted, so that is rare), which does not justify an index on every write.
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('gateway_responses');
}
