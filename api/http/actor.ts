import type { Config } from '../../core/config.js';

/**
 * Who is calling, as the text kept beside what they change (a prompt label's
 * moves): the credential in use. With ADMIN_TOKEN set every guarded route has
 * checked it ("admin token"); without it the API is open on loopback only
 * (api/server.ts) and takes no credential ("local"). Users, once the API has
 * them, are named here too, so history already kept reads the same way.
 */
export function actorOf(config: Pick<Config, 'adminToken'>): string {
  return config.adminToken ? 'admin token' : 'local';
}
