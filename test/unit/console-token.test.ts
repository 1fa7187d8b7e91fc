/**
 * The console's admin token (console/src/api/token.ts and the API client):
 * kept in the tab's sessionStorage, never in localStorage (where earlier
 * versions left it forever), and forgotten when the API refuses it with a 401.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type * as TokenModule from '../../console/src/api/token.js';
import type * as ClientModule from '../../console/src/api/client.js';

class MemoryStorage {
  readonly items = new Map<string, string>();
  getItem(k: string) {
    return this.items.get(k) ?? null;
  }
  setItem(k: string, v: string) {
    this.items.set(k, String(v));
  }
  removeItem(k: string) {
    this.items.delete(k);
  }
}

const KEY = 'agent-server.admin-token';
const local = new MemoryStorage();
const session = new MemoryStorage();
// Imported once the storages are stubbed: token.ts clears the legacy localStorage entry on load.
let token: typeof TokenModule;
let client: typeof ClientModule;

beforeAll(async () => {
  local.setItem(KEY, 'left-by-an-older-console-0123456789');
  vi.stubGlobal('localStorage', local);
  vi.stubGlobal('sessionStorage', session);
  token = await import('../../console/src/api/token.js');
  client = await import('../../console/src/api/client.js');
});
afterAll(() => {
  vi.unstubAllGlobals();
});

/** A call through the console's client, answered by `status`; returns the Authorization it sent. */
async function call(status: number): Promise<string | null> {
  let sent: string | null = null;
  await client.api.GET('/api/agent-server/projects', {
    baseUrl: 'http://console.test',
    fetch: (req: Request) => {
      sent = req.headers.get('authorization');
      return Promise.resolve(
        new Response(JSON.stringify({ error: status !== 200, data: [], status }), {
          status,
          headers: { 'content-type': 'application/json' },
        }),
      );
    },
  });
  return sent;
}

describe("the console's admin token", () => {
  it('removes a token an older console left in localStorage', () => {
    expect(local.getItem(KEY)).toBeNull();
    expect(token.adminToken()).toBeUndefined();
  });

  it('is kept in sessionStorage only, and sent as a bearer token', async () => {
    token.setAdminToken('right-token-0123456789');
    expect(session.getItem(KEY)).toBe('right-token-0123456789');
    expect(local.items.size).toBe(0);
    expect(await call(200)).toBe('Bearer right-token-0123456789');
    expect(token.tokenNeeded()).toBe(false);
  });

  it('is forgotten when the API answers 401, and the prompt shows', async () => {
    token.setAdminToken('rotated-away-0123456789');
    expect(await call(401)).toBe('Bearer rotated-away-0123456789');
    expect(token.tokenNeeded()).toBe(true);
    expect(token.adminToken()).toBeUndefined();
    expect(session.getItem(KEY)).toBeNull();
    // The next call goes without it (and is refused again) until a new one is entered.
    expect(await call(401)).toBeNull();
  });

  it('a late 401 for a token already replaced keeps the new one', () => {
    token.setAdminToken('new-token-0123456789');
    token.clearTokenNeeded();
    token.markTokenNeeded('old-token-0123456789');
    expect(token.adminToken()).toBe('new-token-0123456789');
    expect(token.tokenNeeded()).toBe(false);
  });
});
