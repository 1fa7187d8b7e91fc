import type { Knex } from 'knex';

/**
 * Teams: users with an organisation role and roles per project, groups (from
 * SCIM or the identity provider's groups claim) mapped to roles by
 * configuration, console sessions, API tokens, one-time setup tokens, the
 * OpenID Connect login flows in progress (any replica finishes what another
 * began), and the audit log. New tables only: nothing existing is touched.
 * Credentials are kept as SHA-256 digests, passwords as argon2id hashes.
 */
export async function up(knex: Knex): Promise<void> {
  const id = (t: Knex.CreateTableBuilder) => t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
  const stamps = (t: Knex.CreateTableBuilder) => {
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  };
  await knex.schema.createTable('users', (t) => {
    id(t);
    t.text('user_name').notNullable();
    t.text('display_name');
    t.text('email');
    t.text('org_role').notNullable().defaultTo('member');
    t.boolean('active').notNullable().defaultTo(true);
    t.text('password_hash');
    t.text('external_id');
    t.text('oidc_issuer');
    t.text('oidc_subject');
    t.specificType('idp_groups', 'text[]').notNullable().defaultTo('{}');
    t.timestamp('last_login_at', { useTz: true });
    stamps(t);
    t.check("org_role IN ('owner', 'admin', 'member')", [], 'users_org_role');
    t.unique(['oidc_issuer', 'oidc_subject']);
  });
  await knex.raw('CREATE UNIQUE INDEX users_user_name_lower ON users (lower(user_name))');
  await knex.schema.createTable('project_roles', (t) => {
    t.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.uuid('project_id').notNullable().references('id').inTable('projects').onDelete('CASCADE');
    t.text('role').notNullable();
    stamps(t);
    t.primary(['user_id', 'project_id']);
    t.check("role IN ('admin', 'developer', 'operator', 'viewer')", [], 'project_roles_role');
    t.index(['project_id']);
  });
  await knex.schema.createTable('user_groups', (t) => {
    id(t);
    t.text('display_name').notNullable().unique();
    t.text('external_id');
    stamps(t);
  });
  await knex.schema.createTable('user_group_members', (t) => {
    t.uuid('group_id').notNullable().references('id').inTable('user_groups').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.primary(['group_id', 'user_id']);
    t.index(['user_id']);
  });
  await knex.schema.createTable('user_sessions', (t) => {
    id(t);
    t.text('token_hash').notNullable().unique();
    t.text('csrf_token').notNullable();
    t.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.text('method').notNullable();
    t.text('ip');
    t.text('user_agent');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['user_id']);
    t.index(['expires_at']);
  });
  await knex.schema.createTable('api_tokens', (t) => {
    id(t);
    t.text('name').notNullable();
    t.text('kind').notNullable();
    t.uuid('user_id').references('id').inTable('users').onDelete('CASCADE');
    t.uuid('created_by').references('id').inTable('users').onDelete('SET NULL');
    t.text('token_hash').notNullable().unique();
    t.text('token_prefix').notNullable();
    t.text('org_role');
    t.jsonb('project_roles');
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('revoked_at', { useTz: true });
    t.timestamp('last_used_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check("kind IN ('personal', 'service')", [], 'api_tokens_kind');
    t.check("(kind = 'personal') = (user_id IS NOT NULL)", [], 'api_tokens_personal_has_user');
    t.check("org_role IS NULL OR org_role IN ('owner', 'admin', 'member')", [], 'api_tokens_org_role');
    t.index(['user_id']);
  });
  await knex.schema.createTable('setup_tokens', (t) => {
    t.text('token_hash').primary();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('oidc_login_flows', (t) => {
    t.text('state').primary();
    t.text('code_verifier').notNullable();
    t.text('nonce').notNullable();
    t.text('return_to');
    t.timestamp('expires_at', { useTz: true }).notNullable();
  });
  await knex.schema.createTable('audit_events', (t) => {
    id(t);
    t.timestamp('at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text('actor_type').notNullable();
    t.uuid('actor_id');
    t.text('actor_name');
    t.text('action').notNullable();
    t.text('resource_type');
    t.text('resource_id');
    t.uuid('project_id');
    t.text('method');
    t.text('path');
    t.integer('status');
    t.text('ip');
    t.text('user_agent');
    t.jsonb('before');
    t.jsonb('after');
    t.jsonb('details');
    t.index(['at']);
    t.index(['project_id', 'at']);
    t.index(['actor_id', 'at']);
    t.index(['action', 'at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'audit_events',
    'oidc_login_flows',
    'setup_tokens',
    'api_tokens',
    'user_sessions',
    'user_group_members',
    'user_groups',
    'project_roles',
    'users',
  ])
    await knex.schema.dropTableIfExists(table);
}
