import type { Context } from 'koa';
import { AppError, STATUS_MESSAGES, ValidationError } from '../../../core/errors.js';
import { SCIM_CONTENT_TYPE, SCIM_ERROR } from './urns.js';

export const SCIM_PREFIX = '/scim/';

/** Whether a path is SCIM's, whatever its case (its 404s and 401s come in SCIM's shape too). */
export const isScimPath = (path: string): boolean =>
  path.length >= SCIM_PREFIX.length && path.slice(0, SCIM_PREFIX.length).toLowerCase() === SCIM_PREFIX;

/** RFC 7644 §3.12's scimType values this door sends. */
export type ScimType =
  | 'invalidFilter'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'invalidValue'
  | 'mutability'
  | 'noTarget'
  | 'uniqueness';

/** Thrown when a SCIM request is refused for a reason SCIM names (its `scimType`). */
export class ScimError extends AppError {
  constructor(
    status: number,
    readonly scimType: ScimType | undefined,
    readonly detail: string,
  ) {
    super(status, STATUS_MESSAGES[status] ?? 'Error', { reason: detail });
  }
}

export const invalidValue = (detail: string) => new ScimError(400, 'invalidValue', detail);

interface HttpLike {
  status?: number;
  statusCode?: number;
  code?: string;
}

function shapeOf(caught: unknown): { status: number; scimType?: ScimType; detail: string } {
  if (caught instanceof ScimError)
    return {
      status: caught.status,
      ...(caught.scimType ? { scimType: caught.scimType } : {}),
      detail: caught.detail,
    };
  if (caught instanceof ValidationError) {
    const parse = caught.fields.some((f) => f.type === 'body.parse');
    const detail = caught.fields.map((f) => `${f.field}: ${f.message}`).join('; ');
    return { status: 400, scimType: parse ? 'invalidSyntax' : 'invalidValue', detail };
  }
  if (caught instanceof AppError) {
    if (caught.status === 401)
      return { status: 401, detail: 'Send the SCIM token (SCIM_TOKEN) as Authorization: Bearer' };
    const reason = caught.details.reason;
    const detail =
      caught.expose && typeof reason === 'string' ? reason : (STATUS_MESSAGES[caught.status] ?? 'Error');
    return { status: caught.status, detail };
  }
  // A unique index the door's own checks did not see coming (two requests at once).
  if ((caught as HttpLike).code === '23505')
    return { status: 409, scimType: 'uniqueness', detail: 'A resource with that value already exists' };
  const s = (caught as HttpLike).status ?? (caught as HttpLike).statusCode;
  if (typeof s === 'number' && s >= 400 && s < 500)
    return { status: s, detail: STATUS_MESSAGES[s] ?? 'Error' };
  return { status: 500, detail: STATUS_MESSAGES[500]! };
}

/**
 * Every error under /scim/ in SCIM's error schema (RFC 7644 §3.12): `status`
 * as a string, `scimType` where SCIM has one. 5xx never show internals; they
 * are logged with the request id.
 */
export function scimErrorResponse(ctx: Context, caught: unknown): void {
  const { status, scimType, detail } = shapeOf(caught);
  ctx.status = status;
  if (status === 401) ctx.set('WWW-Authenticate', 'Bearer realm="SCIM"');
  ctx.body = { schemas: [SCIM_ERROR], status: String(status), ...(scimType ? { scimType } : {}), detail };
  ctx.type = SCIM_CONTENT_TYPE;
  if (status >= 500 && status !== 501)
    ctx.state.log.error({ err: caught, request_id: ctx.state.requestId }, 'request failed');
  ctx.state.error = caught;
}
