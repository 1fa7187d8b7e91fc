import type { Knex } from 'knex';

/**
 * Where a run came from, and which doors an agent opens to others:
 * - `runs.source`: `rest` (converse), `langgraph` (the Agent Protocol),
 *   `mcp`, `a2a`, `cron`, `eval` or `sub_agent`. Existing runs are sorted by
 *   what they already record: an eval's replay mark, a cron's id among the
 *   Agent Protocol's kwargs, the Agent Protocol's door, else converse.
 *   Indexed with the project and time for the lists and statistics.
 * - `agents.expose`: `{mcp, a2a}`, whether the agent is served as an MCP tool
 *   and as an A2A agent (both off).
 * - `agents.sub_agents`: `[{agent_id, description?}]`, the agents of the
 *   project this one may hand a task to.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.text('source').notNullable().defaultTo('rest');
  });
  await knex.raw(`
    UPDATE runs SET source = CASE
      WHEN replay IS NOT NULL THEN 'eval'
      WHEN protocol -> 'kwargs' -> 'cron_id' IS NOT NULL THEN 'cron'
      WHEN door = 'langgraph' THEN 'langgraph'
      ELSE 'rest' END
    WHERE replay IS NOT NULL OR door <> 'api'`);
  await knex.raw('CREATE INDEX runs_project_source_created ON runs (project_id, source, created_at)');
  await knex.schema.alterTable('agents', (t) => {
    t.jsonb('expose')
      .notNullable()
      .defaultTo(JSON.stringify({ mcp: false, a2a: false }));
    t.jsonb('sub_agents').notNullable().defaultTo('[]');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('agents', (t) => {
    t.dropColumn('sub_agents');
    t.dropColumn('expose');
  });
  await knex.raw('DROP INDEX IF EXISTS runs_project_source_created');
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('source');
  });
}
