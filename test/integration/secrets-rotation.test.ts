/**
 * Rotating SECRETS_KEY from key A to key B on a scratch database (the shared
 * test database holds rows under every test's random key): secrets written
 * under A, servers running with B and A while the rotation runs, the rotation
 * itself (stopped by a value neither key opens, then resumed, then repeated),
 * and a restart with B alone. Reads go through the real paths: gateway calls
 * that send the provider's key and headers to the scripted vendor, and the
 * MCP server endpoint.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preflight } from '../../api/server.js';
import { WrongSecretsKeyError } from '../../core/crypto/secrets-check.js';
import { ENCRYPTED_COLUMNS } from '../../core/crypto/secrets-rotation.js';
import { SecretBox } from '../../core/crypto/secrets.js';
import { createDb, migrateLatest, type Db } from '../../core/db/knex.js';
import { rotateSecretsFromEnv } from '../../scripts/rotate-secrets.js';
import { startOpenAiVendor } from '../fixtures/vendors/openai.js';
import type { ScriptedVendor } from '../fixtures/vendors/scripted-server.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProject, uniqueName } from '../helpers/factories.js';
import { createProvider, createVirtualKey, fakeApiKey } from '../helpers/factories/config.js';
import { createScratchDatabase } from '../helpers/scratch-db.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const A = randomBytes(32).toString('base64');
const B = randomBytes(32).toString('base64');

interface Made {
  apiKey: string;
  tenant: string;
  virtualKey: string;
  model: string;
  mcpId: string;
  mcpToken: string;
  webhookId: string;
  webhookSecret: string;
}

describe('rotating SECRETS_KEY', () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
  let url: string;
  let db: Db;
  let vendor: ScriptedVendor;
  const apis: TestApi[] = [];

  beforeAll(async () => {
    scratch = await createScratchDatabase('agent_rot');
    url = scratch.url;
    db = createDb(url, { max: 2 });
    await migrateLatest(db);
    vendor = await startOpenAiVendor();
  });

  afterAll(async () => {
    await Promise.all(apis.map((a) => a.close()));
    await db?.destroy();
    await vendor?.close();
    await scratch?.drop();
  });

  /** The API against the scratch database; no telemetry (its pool would outlive the database). */
  async function apiWith(keys: { SECRETS_KEY: string; SECRETS_KEY_PREVIOUS?: string }): Promise<TestApi> {
    const api = await startTestApi({
      DATABASE_URL: url,
      OTEL_SDK_DISABLED: 'true',
      METRICS_ENABLED: 'false',
      ...keys,
    });
    apis.push(api);
    return api;
  }

  async function makeSecrets(api: TestApi): Promise<Made> {
    const apiKey = fakeApiKey();
    const tenant = uniqueName('tenant');
    const provider = await createProvider(api, {
      base_url: `${vendor.url}/v1`,
      api_key: apiKey,
      headers: { 'X-Tenant': tenant },
    });
    const key = await createVirtualKey(api, {
      providers: [{ provider_id: provider.id, model_names: ['*'] }],
    });
    const project = await createProject(api);
    const mcpToken = randomUUID();
    const mcp = await api.request<{ id: string }>(
      'POST',
      `/api/agent-server/mcp-servers?project_id=${project.id}`,
      {
        name: uniqueName('mcp'),
        endpoint: 'http://127.0.0.1:9/mcp',
        headers: { Authorization: `Bearer ${mcpToken}`, 'X-Tenant': tenant },
      },
    );
    expect(mcp.status).toBe(200);
    const hook = await api.request<{ id: string; secret: string }>(
      'POST',
      `/api/agent-server/webhooks?project_id=${project.id}`,
      { url: 'http://127.0.0.1:9/hook', events: ['run.completed'] },
    );
    expect(hook.status).toBe(200);
    return {
      apiKey,
      tenant,
      virtualKey: key.secret_key,
      model: `${provider.name}/m`,
      mcpId: mcp.body.data.id,
      mcpToken,
      webhookId: hook.body.data.id,
      webhookSecret: hook.body.data.secret,
    };
  }

  /** Every secret read the way the server reads it: a gateway call carries the key and headers to the vendor. */
  async function expectReadable(api: TestApi, made: Made[]): Promise<void> {
    for (const m of made) {
      const res = await fetch(`${api.url}/api/gateway/openai/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${m.virtualKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: m.model, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status, await res.clone().text()).toBe(200);
      const seen = vendor.received.at(-1)!.headers;
      expect(seen.authorization).toBe(`Bearer ${m.apiKey}`);
      expect(seen['x-tenant']).toBe(m.tenant);
      const mcp = await api.request<{ headers: Record<string, string> }>(
        'GET',
        `/api/agent-server/mcp-servers/${m.mcpId}`,
      );
      expect(mcp.status).toBe(200);
      expect(mcp.body.data.headers).toEqual({ Authorization: '[redacted]', 'X-Tenant': m.tenant });
      const row = (await db('mcp_servers').where({ id: m.mcpId }).first()) as { headers_enc: string };
      expect(api.server.deps.secrets.decryptJson(row.headers_enc)).toMatchObject({
        Authorization: `Bearer ${m.mcpToken}`,
      });
      // A webhook's secret, as its deliveries are signed with it.
      const hook = (await db('webhooks').where({ id: m.webhookId }).first()) as { secret_enc: string };
      expect(api.server.deps.secrets.decrypt(hook.secret_enc)).toBe(m.webhookSecret);
    }
  }

  /** Every stored encrypted value, to compare before and after. */
  async function storedValues(): Promise<string[]> {
    const values: string[] = [];
    for (const { table, columns, key } of ENCRYPTED_COLUMNS)
      for (const row of (await db(table)
        .select(columns)
        .orderBy(key ?? 'id')) as Array<Record<string, string | null>>)
        for (const c of columns) if (row[c]) values.push(row[c]);
    const check = (await db('secrets_check').first()) as { check_value: string };
    return [...values, check.check_value];
  }

  it('moves every secret from A to B while servers holding both keep serving', async () => {
    // Before: a server with A alone; its first start records the check value under A.
    const apiA = await apiWith({ SECRETS_KEY: A });
    await preflight(apiA.server.deps);
    const underA = [await makeSecrets(apiA), await makeSecrets(apiA)];
    await expectReadable(apiA, underA);
    await apiA.close();

    // Mid-rotation: B is the key, A the previous one. Old secrets read, new ones are written under B.
    const mid = await apiWith({ SECRETS_KEY: B, SECRETS_KEY_PREVIOUS: A });
    await preflight(mid.server.deps);
    expect(mid.logs.text).toContain('SECRETS_KEY rotation not finished');
    await expectReadable(mid, underA);
    const underB = await makeSecrets(mid);
    const onlyB = new SecretBox(Buffer.from(B, 'base64'));
    const newRow = (await db('mcp_servers').where({ id: underB.mcpId }).first()) as { headers_enc: string };
    expect(onlyB.tryOpen(newRow.headers_enc)?.key).toBe('current');

    // A value neither key opens (written under some third key) stops the rotation from finishing.
    const stranger = new SecretBox(randomBytes(32)).encryptJson({ 'X-Tenant': 'lost' });
    const project = await createProject(mid);
    const inserted: Array<{ id: string }> = await db('mcp_servers')
      .insert({
        project_id: project.id,
        name: uniqueName('lost'),
        endpoint: 'http://127.0.0.1:9/mcp',
        transport: 'streamable_http',
        headers_enc: stranger,
      })
      .returning('id');
    const lost = inserted[0];
    const lines: string[] = [];
    const first = await rotateSecretsFromEnv(
      { DATABASE_URL: url, SECRETS_KEY: B, SECRETS_KEY_PREVIOUS: A },
      (line) => lines.push(line),
      { batchSize: 1 },
    );
    expect(first.columns).toEqual({
      'providers.api_key_enc': { reEncrypted: 2, alreadyCurrent: 1, undecryptable: 0 },
      'providers.headers_enc': { reEncrypted: 2, alreadyCurrent: 1, undecryptable: 0 },
      'mcp_servers.headers_enc': { reEncrypted: 2, alreadyCurrent: 1, undecryptable: 1 },
      'a2a_agents.headers_enc': { reEncrypted: 0, alreadyCurrent: 0, undecryptable: 0 },
      'a2a_agents.oauth_enc': { reEncrypted: 0, alreadyCurrent: 0, undecryptable: 0 },
      'webhooks.secret_enc': { reEncrypted: 2, alreadyCurrent: 1, undecryptable: 0 },
      'run_webhooks.secret_enc': { reEncrypted: 0, alreadyCurrent: 0, undecryptable: 0 },
      'a2a_push_configs.token_enc': { reEncrypted: 0, alreadyCurrent: 0, undecryptable: 0 },
      'a2a_push_configs.credentials_enc': { reEncrypted: 0, alreadyCurrent: 0, undecryptable: 0 },
      'mcp_servers.oauth_enc': { reEncrypted: 0, alreadyCurrent: 0, undecryptable: 0 },
      'mcp_oauth_credentials.client_info_enc': { reEncrypted: 0, alreadyCurrent: 0, undecryptable: 0 },
      'mcp_oauth_credentials.tokens_enc': { reEncrypted: 0, alreadyCurrent: 0, undecryptable: 0 },
      'mcp_oauth_flows.code_verifier_enc': { reEncrypted: 0, alreadyCurrent: 0, undecryptable: 0 },
    });
    expect(first.undecryptable).toEqual([{ table: 'mcp_servers', id: lost!.id, column: 'headers_enc' }]);
    expect(first.check).toBe('left under the previous key');
    expect(lines).toContain(`  cannot decrypt mcp_servers ${lost!.id} (headers_enc) with either key`);
    expect(lines.at(-1)).toMatch(/^rotation NOT finished/);
    // A server with B alone would still be refused: the check value says the rotation is unfinished.
    await expect(preflight({ ...mid.server.deps, secrets: onlyB })).rejects.toThrowError(
      WrongSecretsKeyError,
    );
    await expectReadable(mid, [...underA, underB]);

    // Resumed once the bad value is dealt with: what is done stays done, the check value follows.
    await db('mcp_servers').where({ id: lost!.id }).delete();
    const second = await rotateSecretsFromEnv({ DATABASE_URL: url, SECRETS_KEY: B, SECRETS_KEY_PREVIOUS: A });
    expect(second.columns).toEqual({
      'providers.api_key_enc': { reEncrypted: 0, alreadyCurrent: 3, undecryptable: 0 },
      'providers.headers_enc': { reEncrypted: 0, alreadyCurrent: 3, undecryptable: 0 },
      'mcp_servers.headers_enc': { reEncrypted: 0, alreadyCurrent: 3, undecryptable: 0 },
      'a2a_agents.headers_enc': { reEncrypted: 0, alreadyCurrent: 0, undecryptable: 0 },
      'a2a_agents.oauth_enc': { reEncrypted: 0, alreadyCurrent: 0, undecryptable: 0 },
      'webhooks.secret_enc': { reEncrypted: 0, alreadyCurrent: 3, undecryptable: 0 },
      'run_webhooks.secret_enc': { reEncrypted: 0, alreadyCurrent: 0, undecryptable: 0 },
      'a2a_push_configs.token_enc': { reEncrypted: 0, alreadyCurrent: 0, undecryptable: 0 },
      'a2a_push_configs.credentials_enc': { reEncrypted: 0, alreadyCurrent: 0, undecryptable: 0 },
      'mcp_servers.oauth_enc': { reEncrypted: 0, alreadyCurrent: 0, undecryptable: 0 },
      'mcp_oauth_credentials.client_info_enc': { reEncrypted: 0, alreadyCurrent: 0, undecryptable: 0 },
      'mcp_oauth_credentials.tokens_enc': { reEncrypted: 0, alreadyCurrent: 0, undecryptable: 0 },
      'mcp_oauth_flows.code_verifier_enc': { reEncrypted: 0, alreadyCurrent: 0, undecryptable: 0 },
    });
    expect(second.check).toBe('rotated');
    await expectReadable(mid, [...underA, underB]);

    // Again, through the npm script's command: harmless, nothing rewritten.
    const before = await storedValues();
    const again = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/rotate-secrets.ts'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: url, SECRETS_KEY: B, SECRETS_KEY_PREVIOUS: A },
      encoding: 'utf8',
    });
    expect(again.stderr).toBe('');
    expect(again.status).toBe(0);
    expect(again.stdout.trim().split('\n')).toEqual([
      'providers.api_key_enc: 0 re-encrypted, 3 already under SECRETS_KEY',
      'providers.headers_enc: 0 re-encrypted, 3 already under SECRETS_KEY',
      'mcp_servers.headers_enc: 0 re-encrypted, 3 already under SECRETS_KEY',
      'mcp_servers.oauth_enc: 0 re-encrypted, 0 already under SECRETS_KEY',
      'a2a_agents.headers_enc: 0 re-encrypted, 0 already under SECRETS_KEY',
      'a2a_agents.oauth_enc: 0 re-encrypted, 0 already under SECRETS_KEY',
      'webhooks.secret_enc: 0 re-encrypted, 3 already under SECRETS_KEY',
      'run_webhooks.secret_enc: 0 re-encrypted, 0 already under SECRETS_KEY',
      'a2a_push_configs.token_enc: 0 re-encrypted, 0 already under SECRETS_KEY',
      'a2a_push_configs.credentials_enc: 0 re-encrypted, 0 already under SECRETS_KEY',
      'mcp_oauth_credentials.client_info_enc: 0 re-encrypted, 0 already under SECRETS_KEY',
      'mcp_oauth_credentials.tokens_enc: 0 re-encrypted, 0 already under SECRETS_KEY',
      'mcp_oauth_flows.code_verifier_enc: 0 re-encrypted, 0 already under SECRETS_KEY',
      'secrets check: already current',
      'rotation finished: remove SECRETS_KEY_PREVIOUS from every api and worker, then restart them',
    ]);
    expect(await storedValues()).toEqual(before);
    for (const value of before) expect(onlyB.tryOpen(value)?.key).toBe('current');
    await mid.close();

    // After: B alone reads everything; A alone is refused at start-up.
    const apiB = await apiWith({ SECRETS_KEY: B });
    await preflight(apiB.server.deps);
    await expectReadable(apiB, [...underA, underB]);
    expect(apiB.logs.text).not.toContain('SECRETS_KEY rotation');
    const apiOld = await apiWith({ SECRETS_KEY: A });
    await expect(preflight(apiOld.server.deps)).rejects.toThrowError(
      'SECRETS_KEY does not match the key this database was set up with',
    );
  });

  it('refuses to start without the previous key, or with a key pair that does not match the database', () => {
    const run = (env: Record<string, string>) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'scripts/rotate-secrets.ts'], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: url, ...env },
        encoding: 'utf8',
      });
    const noPrevious = run({ SECRETS_KEY: B });
    expect(noPrevious.status).toBe(1);
    expect(noPrevious.stderr).toBe(
      'Invalid configuration: SECRETS_KEY_PREVIOUS must be set to the key being replaced\n',
    );
    const strangers = run({
      SECRETS_KEY: randomBytes(32).toString('base64'),
      SECRETS_KEY_PREVIOUS: randomBytes(32).toString('base64'),
    });
    expect(strangers.status).toBe(1);
    expect(strangers.stderr).toBe(
      'Neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS matches the key this database was set up with: nothing was changed\n',
    );
  });

  it('knows every encrypted column of the schema', async () => {
    const { rows } = await db.raw<{ rows: Array<{ table_name: string; column_name: string }> }>(
      `select table_name, column_name from information_schema.columns
        where table_schema = 'public' and column_name like '%\\_enc' order by 1, 2`,
    );
    const listed = ENCRYPTED_COLUMNS.flatMap(({ table, columns }) => columns.map((c) => `${table}.${c}`));
    expect(rows.map((r) => `${r.table_name}.${r.column_name}`).sort()).toEqual(listed.sort());
  });
});
