import type { Knex } from 'knex';

/**
 * OAuth 2.1 authorization for MCP servers (the MCP authorization spec).
 * Two nullable/defaulted columns on mcp_servers (no rewrite, no long lock)
 * and two new tables: the credentials held per server and end user ('' is
 * the project's own), and the authorization flows under way, keyed by the
 * SHA-256 of their `state` so a leaked table cannot be replayed at the
 * callback. Every secret is encrypted with SECRETS_KEY (`*_enc`).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mcp_servers', (t) => {
    // The optional pre-registered client (client_id, client_secret, scopes, grant…), encrypted JSON.
    t.text('oauth_enc');
    t.boolean('per_user_tokens').notNullable().defaultTo(false);
  });
  await knex.schema.createTable('mcp_oauth_credentials', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('server_id').notNullable().references('id').inTable('mcp_servers').onDelete('CASCADE');
    t.text('end_user_id').notNullable().defaultTo('');
    // The client registered with (or pre-registered at) the authorization server.
    t.text('client_info_enc');
    t.text('tokens_enc');
    // Protected-resource and authorization-server metadata: public documents, no secrets.
    t.jsonb('discovery');
    t.text('scopes');
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['server_id', 'end_user_id']);
  });
  await knex.schema.createTable('mcp_oauth_flows', (t) => {
    t.text('state_hash').primary();
    t.uuid('server_id').notNullable().references('id').inTable('mcp_servers').onDelete('CASCADE');
    t.text('end_user_id').notNullable().defaultTo('');
    t.text('code_verifier_enc').notNullable();
    t.text('redirect_uri').notNullable();
    t.text('scope');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.index(['server_id', 'end_user_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('mcp_oauth_flows');
  await knex.schema.dropTable('mcp_oauth_credentials');
  await knex.schema.alterTable('mcp_servers', (t) => {
    t.dropColumn('per_user_tokens');
    t.dropColumn('oauth_enc');
  });
}
