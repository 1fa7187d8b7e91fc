import type { Knex } from 'knex';

/**
 * Remote A2A agents used as tools:
 * - `a2a_agents`: a project's registered agents (their card URL and the
 *   headers sent to them, encrypted with SECRETS_KEY like an MCP server's).
 * - `agents.a2a_agents`: `[{a2a_agent_id, tool_filters, tools_requiring_approval}]`,
 *   the remote agents an agent's model may call; `[]` for every existing
 *   agent (a defaulted column: no rewrite).
 * - `a2a_task_calls`: one row per tool call sent to a remote agent, written
 *   before the message goes out, so a retried call (a worker died) follows
 *   the remote task it started instead of sending the message again.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('a2a_agents', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('project_id').notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('card_url').notNullable();
    t.text('headers_enc');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['project_id', 'name']);
  });
  await knex.schema.alterTable('agents', (t) => {
    t.jsonb('a2a_agents').notNullable().defaultTo('[]');
  });
  await knex.schema.createTable('a2a_task_calls', (t) => {
    t.uuid('run_id').notNullable().references('id').inTable('runs').onDelete('CASCADE');
    // `<step>:<tool call id>`: one call of the run.
    t.text('call_key').notNullable();
    t.uuid('a2a_agent_id').references('id').inTable('a2a_agents').onDelete('SET NULL');
    // Chosen by us before sending, the same on every attempt: the protocol's idempotency hook.
    t.text('message_id').notNullable();
    // Known once the remote answered with a task; a retry follows it.
    t.text('task_id');
    t.text('context_id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['run_id', 'call_key']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('a2a_task_calls');
  await knex.schema.alterTable('agents', (t) => {
    t.dropColumn('a2a_agents');
  });
  await knex.schema.dropTable('a2a_agents');
}
