import type { Knex } from 'knex';

/**
 * A question a 2026-07-28 MCP server asked as an `input_required` result
 * belongs to a round: the result's key for it and the server's opaque
 * `requestState`. Kept with the question so that, answered days later, the
 * call is retried with `inputResponses` and that `requestState` unmodified
 * (not made afresh). A nullable column, no rewrite.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('run_input_requests', (t) => {
    // {round, key, request_state?}; null for a 2025-era question (an elicitation/create request).
    t.jsonb('round');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('run_input_requests', (t) => {
    t.dropColumn('round');
  });
}
