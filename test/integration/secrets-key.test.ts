import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { databaseUrl, temporalAddress } from '../helpers/services.js';
import { freePort } from '../helpers/ports.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

function runApi(
  secretsKey: string,
  port: number,
): Promise<{ code: number | null; stderr: string; ready: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'api/server.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl(),
        TEMPORAL_ADDRESS: temporalAddress() ?? '127.0.0.1:1',
        SECRETS_KEY: secretsKey,
        PORT: String(port),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let ready = false;
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const poll = setInterval(() => {
      fetch(`http://127.0.0.1:${port}/api/agent-server/health`).then(
        () => {
          if (ready) return;
          ready = true;
          clearInterval(poll);
          child.kill('SIGTERM');
        },
        () => undefined,
      );
    }, 200);
    child.once('exit', (code) => {
      clearInterval(poll);
      resolve({ code, stderr, ready });
    });
  });
}

describe('SECRETS_KEY check at start-up', () => {
  it('serves with the key the database was set up with and refuses another with one clear line', async () => {
    // The test database's first API start (startTestApi or this one) recorded a check value under some key;
    // use a fresh database-wide key by clearing the check first.
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: databaseUrl() });
    await client.connect();
    await client.query('delete from secrets_check');
    await client.end();

    const key = randomBytes(32).toString('base64');
    const first = await runApi(key, await freePort());
    expect(first.ready).toBe(true);
    expect(first.code).toBe(0);

    const wrong = await runApi(randomBytes(32).toString('base64'), await freePort());
    expect(wrong.ready).toBe(false);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr.trim().split('\n')).toEqual([
      'SECRETS_KEY does not match the key this database was set up with: stored provider keys and MCP headers cannot be decrypted',
    ]);
  });
});
