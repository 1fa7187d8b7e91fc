import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../core/config.js';

describe('configuration', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 6060,
      host: '127.0.0.1',
      maxBodyBytes: 10 * 1024 * 1024,
      temporalNamespace: 'default',
      temporalTaskQueue: 'agent-sessions',
      dataDir: '.data',
      logLevel: 'info',
    });
    expect(c.databaseUrl).toBeUndefined();
  });

  it('rejects a bad value with one line naming the variable', () => {
    expect(() => loadConfig({ PORT: 'abc' })).toThrowError(ConfigError);
    try {
      loadConfig({ PORT: 'abc' });
    } catch (err) {
      const message = (err as Error).message;
      expect(message).toMatch(/^Invalid configuration: PORT must be a number \(got "abc"\)$/);
      expect(message).not.toContain('\n');
    }
  });

  it('names every bad variable at once and never echoes secrets', () => {
    const err = (() => {
      try {
        loadConfig({ PORT: '70000', SECRETS_KEY: 'not-a-key', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x' });
      } catch (e) {
        return e as Error;
      }
      throw new Error('expected a ConfigError');
    })();
    for (const name of ['PORT', 'SECRETS_KEY', 'LOG_LEVEL', 'DATABASE_URL'])
      expect(err.message).toContain(name);
    expect(err.message).not.toContain('not-a-key');
  });

  it('requires services outside embedded mode and accepts a proper SECRETS_KEY', () => {
    expect(() => loadConfig({}, { require: ['DATABASE_URL', 'SECRETS_KEY'] })).toThrowError(
      /DATABASE_URL, SECRETS_KEY must be set/,
    );
    const key = randomBytes(32).toString('base64');
    expect(loadConfig({ SECRETS_KEY: key }).secretsKey?.length).toBe(32);
    expect(() => loadConfig({ SECRETS_KEY: randomBytes(16).toString('base64') })).toThrowError(/SECRETS_KEY/);
  });

  it('takes LOG_FORMAT json or pretty (unset: decided by the terminal) and names a bad one', () => {
    expect(loadConfig({}).logFormat).toBeUndefined();
    expect(loadConfig({ LOG_FORMAT: 'json' }).logFormat).toBe('json');
    expect(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(() => loadConfig({ LOG_FORMAT: 'yaml' })).toThrowError(
      /^Invalid configuration: LOG_FORMAT must be one of \[json, pretty\] \(got "yaml"\)$/,
    );
  });

  it('leases gateway limits by default (GATEWAY_LEASE_MS, GATEWAY_LEASE_TTL_MS) and can turn them off', () => {
    expect(loadConfig({}).gateway.leases).toEqual({ spendMs: 2_000, ttlMs: 10_000 });
    expect(loadConfig({ GATEWAY_LEASE_MS: '250', GATEWAY_LEASE_TTL_MS: '5000' }).gateway.leases).toEqual({
      spendMs: 250,
      ttlMs: 5_000,
    });
    expect(loadConfig({ GATEWAY_LEASES: 'false' }).gateway.leases).toBeUndefined();
    expect(() => loadConfig({ GATEWAY_LEASE_TTL_MS: '10' })).toThrowError(
      /GATEWAY_LEASE_TTL_MS must be greater than or equal to 1000 \(got "10"\)/,
    );
  });
});
