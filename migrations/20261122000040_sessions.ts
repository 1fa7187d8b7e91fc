import type { Knex } from 'knex';

/**
 * Durable agent sessions: runs (one per user message, the idempotency unit),
 * their event log (what the converse stream replays), thread summaries, and
 * the message columns a turn records. Additive; `down` removes exactly this.
 */
export async function up(knex: Knex): Promise<void> {
  // One session (agent + conversation) owns one thread.
  await knex.raw(
    `create unique index threads_session_unique on threads (conversation_pk, agent_id) where agent_id is not null`,
  );
  await knex.schema.alterTable('threads', (t) => {
    // Input tokens the provider reported on the thread's last model call (the llm summarizer's measure).
    t.integer('last_input_tokens');
  });

  await knex.schema.createTable('runs', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('project_id').notNullable().references('id').inTable('projects').onDelete('RESTRICT');
    t.uuid('conversation_pk').notNullable().references('pk').inTable('conversations').onDelete('CASCADE');
    t.uuid('thread_id').notNullable().references('id').inTable('threads').onDelete('CASCADE');
    t.uuid('agent_id').references('id').inTable('agents').onDelete('SET NULL');
    // The client's idempotency key, unique per conversation.
    t.text('message_id').notNullable();
    // sha256 of what the message asked (agent + message), to tell a retry from a reuse of the id.
    t.text('request_hash').notNullable();
    t.text('status').notNullable().defaultTo('queued');
    t.text('workflow_id').notNullable();
    t.text('trace_id');
    t.uuid('prompt_version_id').references('id').inTable('prompt_versions').onDelete('SET NULL');
    t.jsonb('output');
    t.jsonb('tool_calls').notNullable().defaultTo('[]');
    t.jsonb('usage').notNullable().defaultTo('{"input_tokens":0,"output_tokens":0}');
    t.jsonb('error');
    t.jsonb('warnings').notNullable().defaultTo('[]');
    // The turn plan pinned at turn start (prompt version, schema, model): small.
    t.jsonb('plan');
    t.integer('last_event_seq').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('started_at', { useTz: true });
    t.timestamp('finished_at', { useTz: true });
    t.unique(['conversation_pk', 'message_id']);
    t.index(['thread_id', 'created_at']);
  });
  await knex.raw(
    `alter table runs add constraint runs_status_check check (status in ('queued','running','awaiting_approval','completed','failed','cancelled'))`,
  );

  await knex.schema.createTable('run_events', (t) => {
    t.uuid('run_id').notNullable().references('id').inTable('runs').onDelete('CASCADE');
    t.integer('seq').notNullable();
    t.text('type').notNullable();
    t.jsonb('data').notNullable();
    // Events that must be written once even if their activity retries carry a key.
    t.text('key');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['run_id', 'seq']);
  });
  await knex.raw(
    `create unique index run_events_key_unique on run_events (run_id, key) where key is not null`,
  );

  await knex.schema.alterTable('messages', (t) => {
    t.uuid('run_id').references('id').inTable('runs').onDelete('SET NULL');
    // Which step of the run wrote it ("user", "1.assistant", "1.tool.<call id>"): a retried activity cannot write twice.
    t.text('step_key');
    t.uuid('prompt_version_id').references('id').inTable('prompt_versions').onDelete('SET NULL');
    t.text('trace_id');
    // Corrective exchanges (structured-output retries) stay in the transcript but out of later turns' history.
    t.boolean('hidden').notNullable().defaultTo(false);
    // Small facts about the message: a tool result's tool name and error flag, a turn's structured output.
    t.jsonb('metadata');
  });
  await knex.raw(
    `create unique index messages_run_step_unique on messages (run_id, step_key) where run_id is not null`,
  );

  await knex.schema.createTable('thread_summaries', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('thread_id').notNullable().references('id').inTable('threads').onDelete('CASCADE');
    t.uuid('run_id').references('id').inTable('runs').onDelete('SET NULL');
    // The summary stands for every message of the thread up to and including this seq.
    t.bigInteger('through_seq').notNullable();
    t.text('content').notNullable();
    t.jsonb('usage');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['thread_id', 'through_seq']);
  });
  await knex.raw(
    `create unique index thread_summaries_run_unique on thread_summaries (run_id) where run_id is not null`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('thread_summaries');
  await knex.raw('drop index if exists messages_run_step_unique');
  await knex.schema.alterTable('messages', (t) => {
    t.dropColumn('metadata');
    t.dropColumn('hidden');
    t.dropColumn('trace_id');
    t.dropColumn('prompt_version_id');
    t.dropColumn('step_key');
    t.dropColumn('run_id');
  });
  await knex.schema.dropTable('run_events');
  await knex.schema.dropTable('runs');
  await knex.schema.alterTable('threads', (t) => {
    t.dropColumn('last_input_tokens');
  });
  await knex.raw('drop index if exists threads_session_unique');
}
