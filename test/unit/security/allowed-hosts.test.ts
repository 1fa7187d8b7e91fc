import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../core/config.js';
import {
  allowedHosts,
  hostAllowed,
  hostOfHeader,
  isLoopbackHost,
  originAllowed,
} from '../../../core/security/allowed-hosts.js';

const list = (env: Record<string, string>) => loadConfig(env).allowedHosts;

describe('the Host allow-list', () => {
  it('reads a Host header: names, ports, IPv6 in brackets; refuses what is not a host', () => {
    expect(hostOfHeader('Example.COM:8080')).toBe('example.com');
    expect(hostOfHeader('example.com.')).toBe('example.com');
    expect(hostOfHeader('[::1]:6060')).toBe('::1');
    expect(hostOfHeader('127.0.0.1')).toBe('127.0.0.1');
    for (const bad of [undefined, '', 'a b', '[::1', '[nope]:1', 'example.com:port', 'user@example.com'])
      expect(hostOfHeader(bad), String(bad)).toBeUndefined();
  });

  it('knows loopback: localhost, 127/8, ::1', () => {
    for (const h of ['localhost', '127.0.0.1', '127.255.0.9', '::1', '[::1]', '::ffff:127.0.0.1'])
      expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['localhost.example', '128.0.0.1', '0.0.0.0', '::', 'evil.localhost'])
      expect(isLoopbackHost(h), h).toBe(false);
  });

  it('defaults to loopback only on the default bind address', () => {
    const l = list({});
    expect(l).toMatchObject({ any: false, names: [], suffixes: [], anyAddress: false, derived: false });
    expect(hostAllowed(l, 'localhost:6060')).toBe(true);
    expect(hostAllowed(l, '10.0.0.1:6060')).toBe(false);
    expect(hostAllowed(l, 'attacker.example')).toBe(false);
    expect(hostAllowed(l, undefined)).toBe(false);
  });

  it('bound to a wildcard address with nothing configured: any IP address, no name (and it says so)', () => {
    const l = list({ HOST: '0.0.0.0' });
    expect(l).toMatchObject({ anyAddress: true, derived: true });
    expect(hostAllowed(l, '10.1.2.3:6060')).toBe(true);
    expect(hostAllowed(l, '[fd00::1]:6060')).toBe(true);
    expect(hostAllowed(l, 'localhost')).toBe(true);
    expect(hostAllowed(l, 'agents.example.com')).toBe(false);
    // An IP is not enough for an Origin: a page on another server's IP is another site.
    expect(originAllowed(l, 'http://10.9.9.9', '10.1.2.3:6060')).toBe(false);
    expect(originAllowed(l, 'http://10.1.2.3:6060', '10.1.2.3:6060')).toBe(true);
    expect(list({ HOST: '::' }).anyAddress).toBe(true);
  });

  it('bound to a specific address with nothing configured: that address', () => {
    const l = list({ HOST: '192.0.2.10' });
    expect(l).toMatchObject({ names: ['192.0.2.10'], anyAddress: false, derived: true });
    expect(hostAllowed(l, '192.0.2.10:6060')).toBe(true);
    expect(hostAllowed(l, '192.0.2.11:6060')).toBe(false);
  });

  it('ALLOWED_HOSTS or PUBLIC_URL replace the derived list (the bound address stays)', () => {
    const l = list({ HOST: '0.0.0.0', ALLOWED_HOSTS: 'api.example.com,*.svc.cluster.local' });
    expect(l).toMatchObject({ anyAddress: false, derived: false });
    expect(hostAllowed(l, 'api.example.com')).toBe(true);
    expect(hostAllowed(l, 'agents.ns.svc.cluster.local:80')).toBe(true);
    expect(hostAllowed(l, 'svc.cluster.local')).toBe(false);
    expect(hostAllowed(l, '10.1.2.3')).toBe(false);
    const p = list({ HOST: '0.0.0.0', PUBLIC_URL: 'https://Agents.Example.org:8443/x' });
    expect(p.names).toEqual(['agents.example.org']);
    expect(hostAllowed(p, 'agents.example.org')).toBe(true);
  });

  it('`*` turns the checks off', () => {
    const l = list({ ALLOWED_HOSTS: '*' });
    expect(hostAllowed(l, 'anything.example')).toBe(true);
    expect(originAllowed(l, 'null', 'anything.example')).toBe(true);
  });

  it('refuses an Origin of null, of another scheme, or malformed', () => {
    const l = allowedHosts({ allowedHosts: undefined, publicUrl: undefined, bindHost: '127.0.0.1' });
    expect(originAllowed(l, 'null', 'localhost:6060')).toBe(false);
    expect(originAllowed(l, 'chrome-extension://abc', 'localhost:6060')).toBe(false);
    expect(originAllowed(l, 'not a url', 'localhost:6060')).toBe(false);
    expect(originAllowed(l, 'http://localhost:3000', '127.0.0.1:6060')).toBe(true);
  });

  it('stops start-up on a bad ALLOWED_HOSTS entry, naming it', () => {
    for (const bad of ['example.com:8443', 'exa mple.com', '*.', '*.1.2.3.4', 'http://example.com', ' , '])
      expect(() => loadConfig({ ALLOWED_HOSTS: bad }), bad).toThrow(ConfigError);
    expect(() => loadConfig({ ALLOWED_HOSTS: 'ok.example,example.com:8443' })).toThrow(
      /ALLOWED_HOSTS has an invalid entry: "example.com:8443": give the name without a port/,
    );
    expect(() => loadConfig({ PUBLIC_URL: 'ftp://example.com' })).toThrow(/PUBLIC_URL/);
  });
});
