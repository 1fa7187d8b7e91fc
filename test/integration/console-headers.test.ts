/**
 * The console's pages come with security headers: a strict Content Security
 * Policy (scripts and styles from the server itself, no framing by another
 * site, requests only to its own origin), X-Frame-Options, nosniff and no
 * Referer. The browser tests (test/e2e/console/) run the built app under it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';

/** `default-src 'self'; script-src 'self'` → {'default-src': ["'self'"], …}. */
function directives(csp: string | null): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const part of (csp ?? '').split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) out[name.toLowerCase()] = values;
  }
  return out;
}

function expectSecurityHeaders(res: Response, what: string) {
  const csp = directives(res.headers.get('content-security-policy'));
  expect(csp['default-src'], what).toEqual(["'self'"]);
  expect(csp['script-src'], what).toEqual(["'self'"]);
  expect(csp['style-src'], what).toEqual(["'self'", "'unsafe-inline'"]);
  expect(csp['img-src'], what).toEqual(["'self'", 'data:']);
  expect(csp['connect-src'], what).toEqual(["'self'"]);
  expect(csp['frame-ancestors'], what).toEqual(["'none'"]);
  expect(csp['base-uri'], what).toEqual(["'self'"]);
  expect(csp['form-action'], what).toEqual(["'self'"]);
  expect(csp['object-src'], what).toEqual(["'none'"]);
  expect(JSON.stringify(csp), what).not.toMatch(/unsafe-eval|\*/);
  expect(res.headers.get('x-frame-options'), what).toBe('DENY');
  expect(res.headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(res.headers.get('referrer-policy'), what).toBe('no-referrer');
}

describe('the console’s security headers', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api.close());

  it('come with the app, its deep links, its assets and the redirects to it', async () => {
    const index = await fetch(`${api.url}/console/`);
    // 503 with a "not built" page when console/dist is missing: headers all the same.
    expect([200, 503]).toContain(index.status);
    expectSecurityHeaders(index, '/console/');
    const html = await index.text();
    expectSecurityHeaders(await fetch(`${api.url}/console/traces/abc`), 'deep link');
    expectSecurityHeaders(await fetch(`${api.url}/console`, { redirect: 'manual' }), '/console');
    expectSecurityHeaders(await fetch(`${api.url}/`, { redirect: 'manual' }), '/');
    if (index.status === 200) {
      // The built app loads under that policy: no inline script, every script from /console/assets.
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      const asset = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1];
      expect(asset).toBeDefined();
      const js = await fetch(`${api.url}${asset}`);
      expect(js.status).toBe(200);
      expectSecurityHeaders(js, asset!);
    }
  });
});
