import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../core/config.js';
import { egressAgent, setEgressPolicy } from '../../core/security/egress-agent.js';
import {
  compileEgressPolicy,
  EgressDeniedError,
  egressSettings,
  findEgressDenial,
  parseEgressList,
  refusalByAddress,
  refusalByName,
  type EgressSettings,
} from '../../core/security/egress-policy.js';

const policyOf = (env: Parameters<typeof egressSettings>[0]) => compileEgressPolicy(egressSettings(env));

/** The refusal for connecting to `address` under the name `host` (an IP literal: host = address). */
function refused(env: Parameters<typeof egressSettings>[0], host: string, port: number, address = host) {
  const policy = policyOf(env);
  return refusalByName(policy, host, port) ?? refusalByAddress(policy, host, address, port);
}

describe('egress lists', () => {
  it('parses CIDRs, single addresses, host patterns and ports, IPv4 and IPv6', () => {
    const { entries, none } = parseEgressList(
      ' 10.0.0.0/8, 192.168.1.7 ,::1/128, fe80::/10, [fd00::]:8080, [2001:db8::/32]:443, 127.0.0.0/8:5432, api.OpenAI.com, *.example.com:8443,',
    );
    expect(none).toBe(false);
    expect(entries).toEqual([
      { kind: 'address', address: '10.0.0.0', prefix: 8, family: 'ipv4', text: '10.0.0.0/8' },
      { kind: 'address', address: '192.168.1.7', prefix: 32, family: 'ipv4', text: '192.168.1.7' },
      { kind: 'address', address: '::1', prefix: 128, family: 'ipv6', text: '::1/128' },
      { kind: 'address', address: 'fe80::', prefix: 10, family: 'ipv6', text: 'fe80::/10' },
      { kind: 'address', address: 'fd00::', prefix: 128, family: 'ipv6', text: '[fd00::]:8080', port: 8080 },
      {
        kind: 'address',
        address: '2001:db8::',
        prefix: 32,
        family: 'ipv6',
        text: '[2001:db8::/32]:443',
        port: 443,
      },
      {
        kind: 'address',
        address: '127.0.0.0',
        prefix: 8,
        family: 'ipv4',
        text: '127.0.0.0/8:5432',
        port: 5432,
      },
      { kind: 'host', pattern: 'api.openai.com', text: 'api.OpenAI.com' },
      { kind: 'host', pattern: '*.example.com', text: '*.example.com:8443', port: 8443 },
    ]);
    expect(parseEgressList('none, 10.0.0.0/8', { allowNone: true }).none).toBe(true);
  });

  it.each([
    ['EGRESS_DENY', '10.0.0.0/33', /EGRESS_DENY has an invalid entry: "10.0.0.0\/33" has an invalid prefix/],
    ['EGRESS_DENY', '::1/129', /EGRESS_DENY .*"::1\/129" has an invalid prefix/],
    ['EGRESS_DENY', '1.2.3.256', /EGRESS_DENY .*"1.2.3.256" is not a valid IP address/],
    ['EGRESS_ALLOW', 'api.openai.com:99999', /EGRESS_ALLOW .*invalid port/],
    ['EGRESS_ALLOW', 'not a host', /EGRESS_ALLOW .*"not a host" is not a CIDR/],
    ['EGRESS_ALLOW', 'a.*.example.com', /EGRESS_ALLOW .*is not a CIDR/],
    ['EGRESS_ALLOW', 'none', /EGRESS_ALLOW .*"none" is only meaningful in EGRESS_DENY/],
  ])('%s=%s stops start-up with one line naming the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrowError(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrowError(message);
    try {
      loadConfig({ [name]: value });
    } catch (err) {
      expect((err as Error).message).not.toContain('\n');
    }
  });
});

describe('egress decisions', () => {
  it('denies link-local, cloud metadata and unspecified addresses by default, however written', () => {
    expect(refused({}, '169.254.169.254', 80)).toMatch(
      /^egress to 169.254.169.254:80 is denied by the built-in EGRESS_DENY entry for link-local/,
    );
    // new URL('http://[::ffff:169.254.169.254]/').hostname is its hex form.
    expect(refused({}, '::ffff:a9fe:a9fe', 80)).toContain('denied');
    expect(refused({}, 'fe80::1', 443)).toContain('denied');
    expect(refused({}, 'fd00:ec2::254', 80)).toContain('cloud metadata');
    expect(refused({}, '0.0.0.0', 8080)).toContain('unspecified');
    // A name is judged by what it resolved to: a metadata alias is caught after DNS.
    expect(refused({}, 'metadata.google.internal', 80, '169.254.169.254')).toMatch(
      /^egress to metadata.google.internal:80 is denied/,
    );
    // Loopback and public addresses stay reachable without configuration.
    expect(refused({}, '127.0.0.1', 8080)).toBeUndefined();
    expect(refused({}, 'api.openai.com', 443, '162.159.140.245')).toBeUndefined();
  });

  it("denies the platform's own PostgreSQL, Temporal and Temporal UI ports, and only those ports", () => {
    const env = {
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/test',
      temporalAddress: 'localhost:7233',
      temporalUiUrl: 'http://127.0.0.1:8233',
    };
    expect(refused(env, '127.0.0.1', 5432)).toBe(
      "egress to 127.0.0.1:5432 is denied by the built-in EGRESS_DENY entry for the platform's PostgreSQL (DATABASE_URL)",
    );
    // Every loopback spelling of the same port.
    expect(refused(env, '127.0.0.2', 5432)).toContain('PostgreSQL');
    expect(refused(env, 'localhost', 5432, '::1')).toContain('PostgreSQL');
    expect(refused(env, '127.0.0.1', 7233)).toContain('Temporal (TEMPORAL_ADDRESS)');
    expect(refused(env, '127.0.0.1', 8233)).toContain('Temporal UI');
    expect(refused(env, '127.0.0.1', 5433)).toBeUndefined();
    // A platform host given by name is denied by that name (and, at connect time, by its addresses).
    const named = { databaseUrl: 'postgres://u:p@db.internal:6543/x' };
    expect(refused(named, 'DB.internal', 6543, '10.0.0.5')).toContain('PostgreSQL');
    expect(refused(named, 'db.internal', 5432, '10.0.0.5')).toBeUndefined();
    expect(egressSettings({ ...named, deny: 'none' }).deny).toEqual([]);
  });

  it('EGRESS_DENY adds to the built-in entries; none drops them', () => {
    expect(refused({ deny: '127.0.0.0/8' }, '127.0.0.1', 8080)).toBe(
      'egress to 127.0.0.1:8080 is denied by EGRESS_DENY',
    );
    expect(refused({ deny: '127.0.0.0/8' }, '169.254.169.254', 80)).toContain('built-in');
    expect(refused({ deny: 'none' }, '169.254.169.254', 80)).toBeUndefined();
    expect(refused({ deny: 'none,10.0.0.0/8' }, '10.1.2.3', 80)).toContain('EGRESS_DENY');
    // Port-specific entries.
    expect(refused({ deny: '10.0.0.0/8:6379' }, '10.1.2.3', 6379)).toContain('EGRESS_DENY');
    expect(refused({ deny: '10.0.0.0/8:6379' }, '10.1.2.3', 6380)).toBeUndefined();
    expect(refused({ deny: '[fd00::/8]:80' }, 'fd12::1', 80)).toContain('EGRESS_DENY');
    // Host patterns: exact names and subdomains (not the apex), case-insensitive.
    expect(refused({ deny: '*.internal.example' }, 'Vault.internal.example', 443, '8.8.8.8')).toContain(
      'EGRESS_DENY',
    );
    expect(refused({ deny: '*.internal.example' }, 'internal.example', 443, '8.8.8.8')).toBeUndefined();
  });

  it('with EGRESS_ALLOW only matching destinations pass, by name or by address; deny still wins', () => {
    const env = { allow: 'api.openai.com, *.anthropic.com, 10.20.0.0/16', deny: '10.20.30.0/24' };
    expect(refused(env, 'api.openai.com', 443, '162.159.140.245')).toBeUndefined();
    expect(refused(env, 'api.anthropic.com', 443, '160.79.104.10')).toBeUndefined();
    expect(refused(env, 'llm.internal', 443, '10.20.1.1')).toBeUndefined();
    expect(refused(env, 'evil.example', 443, '1.2.3.4')).toBe(
      'egress to evil.example:443 is not permitted by EGRESS_ALLOW',
    );
    expect(refused(env, '127.0.0.1', 8080)).toContain('not permitted by EGRESS_ALLOW');
    expect(refused(env, 'llm.internal', 443, '10.20.30.4')).toContain('denied by EGRESS_DENY');
    // An allowed name resolving to a link-local address is still refused.
    expect(refused(env, 'api.openai.com', 443, '169.254.169.254')).toContain('built-in');
  });

  it('finds the refusal behind the wrappers client libraries put around it', () => {
    const denial = new EgressDeniedError('egress to x:1 is denied by EGRESS_DENY');
    expect(findEgressDenial(new TypeError('fetch failed', { cause: denial }))).toBe(denial);
    expect(findEgressDenial(new AggregateError([new Error('a'), denial]))).toBe(denial);
    expect(findEgressDenial(new Error('other'))).toBeUndefined();
  });
});

describe('the connector enforces the policy before any connection', () => {
  let server: Server;
  let port: number;
  let connections = 0;
  beforeAll(async () => {
    server = createServer((_req, res) => res.end('ok'));
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    setEgressPolicy(egressSettings({}));
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const get = async (url: string) => {
    try {
      const res = await request(url, { dispatcher: egressAgent() });
      return await res.body.text();
    } catch (err) {
      return err;
    }
  };

  it('refuses an IP literal and a name resolving to a denied address, and connects when allowed', async () => {
    setEgressPolicy(egressSettings({ deny: '127.0.0.1/32,::1/128' }));
    const literal = await get(`http://127.0.0.1:${port}/`);
    expect(literal).toBeInstanceOf(EgressDeniedError);
    expect((literal as Error).message).toBe(`egress to 127.0.0.1:${port} is denied by EGRESS_DENY`);
    // localhost is in no list: it is refused for the address it resolves to.
    const named = await get(`http://localhost:${port}/`);
    expect((named as Error).message).toBe(`egress to localhost:${port} is denied by EGRESS_DENY`);
    expect(connections).toBe(0);

    setEgressPolicy(egressSettings({}));
    expect(await get(`http://localhost:${port}/`)).toBe('ok');
    expect(connections).toBe(1);
  });

  it('a platform host given by name is refused for its addresses too, reached by another spelling', async () => {
    const settings: EgressSettings = {
      allow: [],
      deny: [
        {
          kind: 'host',
          pattern: 'localhost',
          port,
          resolve: true,
          text: `localhost:${port}`,
          builtin: "the platform's PostgreSQL (DATABASE_URL)",
        },
      ],
    };
    setEgressPolicy(settings);
    const before = connections;
    const viaAddress = await get(`http://127.0.0.1:${port}/`);
    expect((viaAddress as Error).message).toContain("the platform's PostgreSQL");
    expect(connections).toBe(before);
  });

  it('a connection pooled under a looser policy is not reused under a stricter one', async () => {
    setEgressPolicy(egressSettings({}));
    expect(await get(`http://127.0.0.1:${port}/`)).toBe('ok');
    setEgressPolicy(egressSettings({ deny: '127.0.0.0/8' }));
    expect(await get(`http://127.0.0.1:${port}/`)).toBeInstanceOf(EgressDeniedError);
  });
});
