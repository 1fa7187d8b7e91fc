import type { Knex } from 'knex';

/**
 * OAuth for remote A2A agents, as MCP servers have it: the agent's own
 * settings (pre-registered client, scopes, grant) and whether each end user
 * authorizes on their own, on a2a_agents; the credentials and flows go in
 * the same two tables as MCP servers' (one callback, one rotation of
 * secrets), each row owned by exactly one MCP server or one A2A agent.
 * Nullable and defaulted columns only: no rewrite, no long lock.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('a2a_agents', (t) => {
    t.text('oauth_enc');
    t.boolean('per_user_tokens').notNullable().defaultTo(false);
  });
  for (const table of ['mcp_oauth_credentials', 'mcp_oauth_flows']) {
    await knex.raw('ALTER TABLE ?? ALTER COLUMN server_id DROP NOT NULL', [table]);
    await knex.schema.alterTable(table, (t) => {
      t.uuid('a2a_agent_id').references('id').inTable('a2a_agents').onDelete('CASCADE');
      t.check('num_nonnulls(server_id, a2a_agent_id) = 1', [], `${table}_one_owner`);
    });
  }
  await knex.schema.alterTable('mcp_oauth_credentials', (t) => t.unique(['a2a_agent_id', 'end_user_id']));
  await knex.schema.alterTable('mcp_oauth_flows', (t) => t.index(['a2a_agent_id', 'end_user_id']));
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['mcp_oauth_flows', 'mcp_oauth_credentials']) {
    await knex(table).whereNotNull('a2a_agent_id').delete();
    await knex.schema.alterTable(table, (t) => {
      t.dropChecks(`${table}_one_owner`);
      t.dropColumn('a2a_agent_id');
    });
    await knex.raw('ALTER TABLE ?? ALTER COLUMN server_id SET NOT NULL', [table]);
  }
  await knex.schema.alterTable('a2a_agents', (t) => {
    t.dropColumn('per_user_tokens');
    t.dropColumn('oauth_enc');
  });
}
