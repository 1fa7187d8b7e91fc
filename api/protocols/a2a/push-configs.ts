import { randomUUID } from 'node:crypto';
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { SecretBox } from '../../../core/crypto/secrets.js';
import type { DbA2aPushConfig, DbA2aPushConfigInsert } from '../../../core/db/tables/index.js';
import { ValidationError } from '../../../core/errors.js';

const MAX_ID = 200;
const MAX_URL = 2048;
const MAX_SECRET = 4096;

function checkUrl(url: string, field: string): void {
  let parsed: URL | undefined;
  try {
    parsed = url.length <= MAX_URL ? new URL(url) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
    throw ValidationError.field(field, `${field} must be an http or https URL`, 'string.uri');
}

/** Within `max` and sendable as a header value (no control characters). */
function checkLength(value: string, max: number, field: string): void {
  if (value.length > max)
    throw ValidationError.field(field, `${field} must be at most ${max} characters`, 'string.max');
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(value))
    throw ValidationError.field(field, `${field} must not hold control characters`, 'string.pattern.base');
}

/**
 * A client's push config as our row, checked (`prefix` names where it came
 * from in the request, so InvalidParams names the field): an http(s) URL,
 * the id it chose (or a new one), its token and authentication encrypted.
 */
export function pushConfigRow(
  box: SecretBox,
  config: TaskPushNotificationConfig,
  run: { id: string; project_id: string },
  prefix = '',
): DbA2aPushConfigInsert {
  checkUrl(config.url ?? '', `${prefix}url`);
  const id = config.id || randomUUID();
  checkLength(id, MAX_ID, `${prefix}id`);
  checkLength(config.token ?? '', MAX_SECRET, `${prefix}token`);
  const auth = config.authentication;
  if (auth && !auth.scheme && auth.credentials)
    throw ValidationError.field(
      `${prefix}authentication.scheme`,
      `${prefix}authentication.scheme is required with credentials`,
      'any.required',
    );
  if (auth) {
    checkLength(auth.scheme, 100, `${prefix}authentication.scheme`);
    checkLength(auth.credentials, MAX_SECRET, `${prefix}authentication.credentials`);
    if (/[\s\r\n]/.test(auth.scheme))
      throw ValidationError.field(
        `${prefix}authentication.scheme`,
        `${prefix}authentication.scheme must be one word (e.g. Bearer)`,
        'string.pattern.base',
      );
  }
  return {
    id,
    run_id: run.id,
    project_id: run.project_id,
    url: config.url,
    token_enc: config.token ? box.encrypt(config.token) : null,
    auth_scheme: auth?.scheme || null,
    credentials_enc: auth?.credentials ? box.encrypt(auth.credentials) : null,
  };
}

/** A stored config as A2A answers it: the client's token back, its credentials never. */
export function pushConfigOf(box: SecretBox, row: DbA2aPushConfig): TaskPushNotificationConfig {
  return {
    tenant: '',
    id: row.id,
    taskId: row.run_id,
    url: row.url,
    token: row.token_enc ? box.decrypt(row.token_enc) : '',
    authentication: row.auth_scheme ? { scheme: row.auth_scheme, credentials: '' } : undefined,
  };
}
