import type { Context } from 'koa';
import type { AuditInput } from '../../core/audit/audit-log.js';

/** Where a request came from and what it was, as an audit event records it. */
export function auditOrigin(ctx: Context): Pick<AuditInput, 'ip' | 'userAgent' | 'method' | 'path'> {
  return {
    ip: ctx.ip || undefined,
    userAgent: ctx.get('user-agent') || undefined,
    method: ctx.method,
    path: ctx.path,
  };
}
