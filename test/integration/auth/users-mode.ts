import { createDb, migrateLatest, type Db } from '../../../core/db/knex.js';
import { startTestApi, type Envelope, type HttpResult, type TestApi } from '../../helpers/api.js';
import { createScratchDatabase } from '../../helpers/scratch-db.js';

/**
 * An API in users mode on a database of its own: "no user yet" is a state of
 * the whole database, which the shared test database cannot offer.
 */
export interface UsersModeApi {
  api: TestApi;
  db: Db;
  url: string;
  close(): Promise<void>;
}

export async function startUsersModeApi(
  prefix: string,
  env: Record<string, string> = {},
): Promise<UsersModeApi> {
  const scratch = await createScratchDatabase(prefix);
  const db = createDb(scratch.url, { max: 4 });
  await migrateLatest(db);
  const api = await startTestApi({ DATABASE_URL: scratch.url, AUTH_MODE: 'users', ...env });
  return {
    api,
    db,
    url: scratch.url,
    async close() {
      await api.close();
      await db.destroy();
      await scratch.drop();
    },
  };
}

/** The setup token the server logged at start. */
export function loggedSetupToken(api: TestApi): string {
  const token = /ags_setup_[A-Za-z0-9_-]+/.exec(api.logs.text)?.[0];
  if (!token) throw new Error(`no setup token in the log:\n${api.logs.text}`);
  return token;
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/**
 * A browser's side of a console session: keeps the cookie the API sets and
 * sends it back, with the CSRF token on changes unless told not to.
 */
export class Browser {
  cookie: string | undefined;
  csrf: string | undefined;
  lastSetCookie: string[] = [];

  constructor(private readonly api: TestApi) {}

  async request<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    opts: { csrf?: boolean } = {},
  ): Promise<HttpResult<Envelope<T>>> {
    const headers: Record<string, string> = {};
    if (this.cookie) headers.cookie = this.cookie;
    if (this.csrf && opts.csrf !== false && method !== 'GET') headers['x-csrf-token'] = this.csrf;
    const res = await this.api.request<T>(method, path, body, headers);
    this.lastSetCookie = res.headers.getSetCookie();
    for (const c of this.lastSetCookie) {
      const pair = c.split(';')[0]!;
      this.cookie = pair.endsWith('=') ? undefined : pair;
    }
    const csrf = (res.body?.data as { csrf_token?: unknown } | undefined)?.csrf_token;
    if (typeof csrf === 'string') this.csrf = csrf;
    return res;
  }
}

export async function rowCount(db: Db, table: string): Promise<number> {
  const [row] = await db(table).count<Array<{ count: string | number }>>('* as count');
  return Number(row!.count);
}
