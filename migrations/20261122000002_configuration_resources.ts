import type { Knex } from 'knex';

/**
 * Every configuration resource of the interface. References between resources
 * are RESTRICT foreign keys: deleting something still referenced is refused
 * (the services turn that into a 409 naming the referrer), never cascaded.
 * Parts of a resource (prompt versions, an agent's MCP entries, a key's
 * grants, a conversation's threads and messages) go with their owner.
 */
export async function up(knex: Knex): Promise<void> {
  const timestamps = (t: Knex.CreateTableBuilder) => {
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  };

  // A value encrypted with SECRETS_KEY at first start; a different key fails to decrypt it.
  await knex.schema.createTable('secrets_check', (t) => {
    t.smallint('id').primary();
    t.text('check_value').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('providers', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable().unique();
    t.text('provider_type').notNullable();
    t.text('base_url');
    t.text('api_key_enc');
    t.text('api_key_last4');
    t.text('headers_enc');
    t.integer('connect_timeout_ms').notNullable().defaultTo(10_000);
    t.integer('timeout_ms').notNullable().defaultTo(600_000);
    timestamps(t);
    t.index(['provider_type']);
  });
  await knex.raw(
    `alter table providers add constraint providers_type_check check (provider_type in ('openai','anthropic','gemini'))`,
  );

  await knex.schema.createTable('virtual_keys', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable().unique();
    t.specificType('key_hash', 'bytea').notNullable().unique();
    t.text('key_prefix').notNullable();
    t.timestamp('expires_at', { useTz: true });
    t.jsonb('rate_limit');
    t.jsonb('budget');
    t.jsonb('fallbacks').notNullable().defaultTo('[]');
    timestamps(t);
  });

  await knex.schema.createTable('virtual_key_grants', (t) => {
    t.uuid('virtual_key_id').notNullable().references('id').inTable('virtual_keys').onDelete('CASCADE');
    t.uuid('provider_id').notNullable().references('id').inTable('providers').onDelete('RESTRICT');
    t.jsonb('model_names').notNullable();
    t.integer('position').notNullable().defaultTo(0);
    t.primary(['virtual_key_id', 'provider_id']);
    t.index(['provider_id']);
  });

  await knex.schema.alterTable('projects', (t) => {
    t.uuid('virtual_key_id').references('id').inTable('virtual_keys').onDelete('RESTRICT');
    t.index(['virtual_key_id']);
  });

  await knex.schema.createTable('models', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('project_id').notNullable().references('id').inTable('projects').onDelete('RESTRICT');
    t.text('name').notNullable();
    t.text('model_id').notNullable();
    t.text('provider_type').notNullable();
    t.uuid('provider_id').references('id').inTable('providers').onDelete('RESTRICT');
    t.jsonb('parameters').notNullable().defaultTo('{}');
    t.jsonb('pricing');
    timestamps(t);
    t.unique(['project_id', 'name']);
    t.index(['project_id', 'created_at']);
    t.index(['provider_id']);
  });

  await knex.schema.createTable('prompts', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('project_id').notNullable().references('id').inTable('projects').onDelete('RESTRICT');
    t.text('name').notNullable();
    timestamps(t);
    t.unique(['project_id', 'name']);
    t.index(['name']);
  });

  await knex.schema.createTable('prompt_versions', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('prompt_id').notNullable().references('id').inTable('prompts').onDelete('CASCADE');
    t.integer('version').notNullable();
    t.text('template').notNullable();
    t.text('commit_message').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['prompt_id', 'version']);
  });

  // A label sits on at most one version of a prompt.
  await knex.schema.createTable('prompt_labels', (t) => {
    t.uuid('prompt_id').notNullable().references('id').inTable('prompts').onDelete('CASCADE');
    t.text('label').notNullable();
    t.uuid('version_id').notNullable().references('id').inTable('prompt_versions').onDelete('CASCADE');
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['prompt_id', 'label']);
  });

  await knex.schema.createTable('schemas', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('project_id').notNullable().references('id').inTable('projects').onDelete('RESTRICT');
    t.text('name').notNullable();
    t.text('description');
    t.jsonb('schema').notNullable();
    timestamps(t);
    t.unique(['project_id', 'name']);
    t.index(['project_id', 'created_at']);
  });

  await knex.schema.createTable('mcp_servers', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('project_id').notNullable().references('id').inTable('projects').onDelete('RESTRICT');
    t.text('name').notNullable();
    t.text('endpoint').notNullable();
    t.text('transport').notNullable().defaultTo('streamable_http');
    t.text('headers_enc');
    timestamps(t);
    t.unique(['project_id', 'name']);
    t.index(['project_id', 'created_at']);
  });

  await knex.schema.createTable('agents', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('project_id').notNullable().references('id').inTable('projects').onDelete('RESTRICT');
    t.text('name').notNullable();
    t.text('description');
    t.uuid('model_id').notNullable().references('id').inTable('models').onDelete('RESTRICT');
    t.uuid('prompt_id').notNullable().references('id').inTable('prompts').onDelete('RESTRICT');
    t.text('prompt_label').notNullable().defaultTo('latest');
    t.uuid('schema_id').references('id').inTable('schemas').onDelete('RESTRICT');
    t.boolean('enable_history').notNullable().defaultTo(true);
    t.text('summarizer_type').notNullable().defaultTo('none');
    t.integer('llm_summarizer_token_threshold');
    t.integer('llm_summarizer_keep_recent_count');
    t.uuid('llm_summarizer_prompt_id').references('id').inTable('prompts').onDelete('RESTRICT');
    t.text('llm_summarizer_prompt_label');
    t.uuid('llm_summarizer_model_id').references('id').inTable('models').onDelete('RESTRICT');
    t.integer('sliding_window_keep_count');
    t.jsonb('sandbox').notNullable().defaultTo('{"enabled":false}');
    t.integer('max_iterations').notNullable().defaultTo(20);
    t.integer('approval_timeout_ms');
    timestamps(t);
    t.unique(['project_id', 'name']);
    t.index(['project_id', 'created_at']);
    t.index(['model_id']);
    t.index(['prompt_id']);
    t.index(['schema_id']);
    t.index(['llm_summarizer_prompt_id']);
    t.index(['llm_summarizer_model_id']);
  });

  await knex.schema.createTable('agent_mcp_servers', (t) => {
    t.uuid('agent_id').notNullable().references('id').inTable('agents').onDelete('CASCADE');
    t.uuid('mcp_server_id').notNullable().references('id').inTable('mcp_servers').onDelete('RESTRICT');
    t.jsonb('tool_filters').notNullable().defaultTo('[]');
    t.jsonb('tools_requiring_approval').notNullable().defaultTo('[]');
    t.integer('position').notNullable().defaultTo(0);
    t.primary(['agent_id', 'mcp_server_id']);
    t.index(['mcp_server_id']);
  });

  // Conversation ids are client-chosen strings, unique within a project; `pk` is ours.
  await knex.schema.createTable('conversations', (t) => {
    t.uuid('pk').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('project_id').notNullable().references('id').inTable('projects').onDelete('RESTRICT');
    t.text('id').notNullable();
    t.text('namespace').notNullable().defaultTo('default');
    t.jsonb('context').notNullable().defaultTo('{}');
    timestamps(t);
    t.unique(['project_id', 'id']);
    t.index(['id']);
    t.index(['project_id', 'namespace', 'created_at']);
  });

  await knex.schema.createTable('threads', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('conversation_pk').notNullable().references('pk').inTable('conversations').onDelete('CASCADE');
    // History outlives an agent's deletion; the thread just loses the link.
    t.uuid('agent_id').references('id').inTable('agents').onDelete('SET NULL');
    timestamps(t);
    t.index(['conversation_pk', 'created_at']);
    t.index(['agent_id']);
  });

  await knex.schema.createTable('messages', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.bigIncrements('seq', { primaryKey: false });
    t.uuid('thread_id').notNullable().references('id').inTable('threads').onDelete('CASCADE');
    t.text('role').notNullable();
    t.jsonb('content').notNullable();
    t.jsonb('tool_calls');
    t.text('tool_call_id');
    t.jsonb('usage');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['thread_id', 'seq']);
  });
  await knex.raw(
    `alter table messages add constraint messages_role_check check (role in ('user','assistant','tool','system'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'messages',
    'threads',
    'conversations',
    'agent_mcp_servers',
    'agents',
    'mcp_servers',
    'schemas',
    'prompt_labels',
    'prompt_versions',
    'prompts',
    'models',
  ]) {
    await knex.schema.dropTable(table);
  }
  await knex.schema.alterTable('projects', (t) => {
    t.dropColumn('virtual_key_id');
  });
  for (const table of ['virtual_key_grants', 'virtual_keys', 'providers', 'secrets_check']) {
    await knex.schema.dropTable(table);
  }
}
