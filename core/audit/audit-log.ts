import { AsyncLocalStorage } from 'node:async_hooks';
import type { Db } from '../db/knex.js';
import type { Principal } from '../auth/principal.js';
import { REDACTED, redactText } from '../security/redact.js';

/**
 * One entry of the audit log: who (the principal, or a named actor for what
 * happens before anyone is signed in: a failed login, SCIM), what (`action`,
 * e.g. `agent.update`, `auth.login_failed`), on what, from where, and the
 * fields before and after (redacted by the writer: never a secret).
 */
export interface AuditInput {
  actor: Principal | { kind: 'anonymous' | 'scim' | 'setup' | 'system'; name: string; userId?: string };
  action: string;
  resourceType?: string;
  resourceId?: string;
  projectId?: string;
  method?: string;
  path?: string;
  status?: number;
  ip?: string;
  userAgent?: string;
  before?: unknown;
  after?: unknown;
  details?: Record<string, unknown>;
}

const actorType = (actor: AuditInput['actor']): string =>
  actor.kind === 'user' && 'via' in actor ? (actor.via === 'token' ? 'api_token' : 'user') : actor.kind;

/**
 * The request being audited by the API's trail (api/http/audit.ts): an event
 * recorded while it runs marks it, so the trail does not write a second,
 * plainer row for what the handler already described.
 */
export const auditScope = new AsyncLocalStorage<{ recorded: boolean }>();

/**
 * Writes one audit event. Callers pass what happened; secrets are removed
 * here (`redactForAudit`), so no caller can forget to.
 */
export async function recordAudit(db: Db, event: AuditInput): Promise<void> {
  const actor = event.actor;
  await db('audit_events').insert({
    actor_type: actorType(actor),
    actor_id: ('userId' in actor && actor.userId) || ('tokenId' in actor && actor.tokenId) || null,
    actor_name: actor.name,
    action: event.action,
    resource_type: event.resourceType ?? null,
    resource_id: event.resourceId ?? null,
    project_id: event.projectId ?? null,
    method: event.method ?? null,
    path: event.path ?? null,
    status: event.status ?? null,
    ip: event.ip ?? null,
    user_agent: event.userAgent ?? null,
    before: event.before === undefined ? null : JSON.stringify(redactForAudit(event.before)),
    after: event.after === undefined ? null : JSON.stringify(redactForAudit(event.after)),
    details: event.details === undefined ? null : JSON.stringify(redactForAudit(event.details)),
  });
  const scope = auditScope.getStore();
  if (scope) scope.recorded = true;
}

/** Keys whose values are secrets, whatever object they sit in: their value is replaced. */
const SECRET_KEY =
  /(^|_)(password|secret|token|api_key|apikey|authorization|cookie|client_secret|private_key|credentials?)(_|$)/i;
/** Named like a secret but shown to people anyway: a token's first characters, how they tell tokens apart. */
const SHOWN_KEY = /^(token|key)_prefix$/i;
/** Columns holding a secret in another form (sealed, digested): left out altogether, not even "[redacted]". */
const SEALED_KEY = /_(enc|hash)$/i;

/**
 * A copy of `value` fit for the audit log: sealed columns (`*_enc`,
 * `*_hash`) dropped, every secret-looking key's value replaced by
 * "[redacted]", a header map's values replaced (its names kept: which headers
 * changed is worth knowing), and credential-shaped text in any other string
 * (a URL's userinfo or `?api_key=`, a bearer token, a known key format)
 * redacted as logs are (core/security/redact.ts).
 */
export function redactForAudit(value: unknown): unknown {
  if (typeof value === 'string') return redactText(value);
  if (Array.isArray(value)) return value.map(redactForAudit);
  if (value instanceof Date) return value.toISOString();
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (SEALED_KEY.test(k)) continue;
      if (v === null || v === undefined) out[k] = v;
      else if (SECRET_KEY.test(k) && !SHOWN_KEY.test(k)) out[k] = REDACTED;
      else if (/^headers$/i.test(k)) out[k] = redactHeaderValues(v);
      else out[k] = redactForAudit(v);
    }
    return out;
  }
  return value;
}

const redactHeaderValues = (headers: unknown): unknown =>
  headers && typeof headers === 'object' && !Array.isArray(headers)
    ? Object.fromEntries(Object.keys(headers).map((name) => [name, REDACTED]))
    : REDACTED;
