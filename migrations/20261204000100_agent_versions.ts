import type { Knex } from 'knex';

/**
 * Agents get versions: every write of an agent stores a full snapshot of its
 * settings in `agent_versions`, and `agents.version` says which one is in
 * force. Agents also gain what the Agent Protocol's assistants carry
 * (`metadata`, `config`, `context`: template variables under the
 * conversation's, and `graph_id`: the agent an agent was copied from), and a
 * run records the version its turn ran with.
 *
 * The backfill writes one row per existing agent (its version 1, from its
 * current settings): agents are a configuration table of hundreds of rows,
 * and the new columns all have constant defaults (no table rewrite).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('agents', (t) => {
    t.integer('version').notNullable().defaultTo(1);
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.jsonb('config').notNullable().defaultTo('{}');
    t.jsonb('context').notNullable().defaultTo('{}');
    // No foreign key: the copy keeps naming its origin (its graph) when that agent is deleted.
    t.uuid('graph_id');
    t.index(['project_id', 'graph_id']);
  });
  await knex.schema.createTable('agent_versions', (t) => {
    t.uuid('agent_id').notNullable().references('id').inTable('agents').onDelete('CASCADE');
    t.integer('version').notNullable();
    t.jsonb('snapshot').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['agent_id', 'version']);
  });
  await knex.schema.alterTable('runs', (t) => {
    t.integer('agent_version');
  });
  await knex.raw(`
    insert into agent_versions (agent_id, version, snapshot, created_at)
    select a.id, 1,
           (to_jsonb(a) - 'id' - 'project_id' - 'version' - 'created_at' - 'updated_at')
             || jsonb_build_object('mcp_servers', coalesce(
                  (select jsonb_agg(jsonb_build_object('mcp_server_id', e.mcp_server_id,
                                                       'tool_filters', e.tool_filters,
                                                       'tools_requiring_approval', e.tools_requiring_approval)
                                    order by e.position)
                     from agent_mcp_servers e where e.agent_id = a.id), '[]'::jsonb)),
           a.updated_at
      from agents a`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('agent_version');
  });
  await knex.schema.dropTable('agent_versions');
  await knex.schema.alterTable('agents', (t) => {
    t.dropIndex(['project_id', 'graph_id']);
    t.dropColumns('version', 'metadata', 'config', 'context', 'graph_id');
  });
}
