import type { Knex } from 'knex';

/**
 * The MCP protocol revision each server speaks, as our client learnt it:
 * 2026-07-28 servers ("modern": `server/discover`, stateless requests) or
 * 2025-era ones (the `initialize` handshake). Remembered so that a call does
 * not probe again; a nullable column, no rewrite. Forgotten when the
 * server's endpoint or transport changes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mcp_servers', (t) => {
    // {era, version, discover?, learnt_at}: public protocol facts, no secrets.
    t.jsonb('protocol');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mcp_servers', (t) => {
    t.dropColumn('protocol');
  });
}
