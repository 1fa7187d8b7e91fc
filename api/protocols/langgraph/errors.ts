import type { Context } from 'koa';
import { AppError, STATUS_MESSAGES, ValidationError } from '../../../core/errors.js';

export const LANGGRAPH_PREFIX = '/api/langgraph/';

/** Whether a path is the Agent Protocol's, whatever its case (its 404s come in its shape too). */
export const isLangGraphPath = (path: string): boolean =>
  path.length >= LANGGRAPH_PREFIX.length &&
  path.slice(0, LANGGRAPH_PREFIX.length).toLowerCase() === LANGGRAPH_PREFIX;

/** Thrown with the Agent Protocol's own status and message (`{detail}`), e.g. a refused double text (422). */
export class ProtocolError extends AppError {
  constructor(
    status: number,
    readonly detail: string,
  ) {
    super(status, detail, { detail });
  }
}

/** FastAPI's validation item, which the Agent Server API answers with its 422s. */
interface DetailItem {
  loc: string[];
  msg: string;
  type: string;
}

/** Where a field was, in FastAPI's words: `path`, `query` or `body`. */
function locationOf(ctx: Context, top: string): string {
  const params = (ctx as { params?: Record<string, unknown> }).params ?? {};
  if (top in params) return 'path';
  if (top in ctx.query) return 'query';
  return 'body';
}

function validationDetail(ctx: Context, err: ValidationError): DetailItem[] {
  return err.fields.map((f) => {
    const parts = f.field.split('.').filter(Boolean);
    return { loc: [locationOf(ctx, parts[0] ?? ''), ...parts], msg: f.message, type: f.type };
  });
}

/** "Thread not found", "Assistant not found" …: the resource our errors name, in the protocol's words. */
const RESOURCE_NAMES: Record<string, string> = {
  agent: 'Assistant',
  assistant: 'Assistant',
  conversation: 'Thread',
  thread: 'Thread',
  run: 'Run',
  project: 'Project',
  cron: 'Cron',
  item: 'Item',
};

function detailOf(err: AppError): string {
  if (err instanceof ProtocolError) return err.detail;
  const d = err.details;
  if (err.status === 404) {
    const name = typeof d.resource === 'string' ? RESOURCE_NAMES[d.resource] : undefined;
    return name ? `${name} not found` : 'Not found';
  }
  if (typeof d.reason === 'string') return d.reason;
  return err.message || STATUS_MESSAGES[err.status] || 'Error';
}

interface HttpLike {
  status?: number;
  statusCode?: number;
  message?: string;
}

/**
 * Every error under /api/langgraph/ in the Agent Server API's shape: `{detail}`
 * with its status (validation as FastAPI's 422 with a list of fields). 5xx
 * never show internals; they are logged with the request id.
 */
export function langGraphErrorResponse(ctx: Context, caught: unknown): void {
  let status = 500;
  let detail: unknown = STATUS_MESSAGES[500];
  if (caught instanceof ValidationError) {
    status = 422;
    detail = validationDetail(ctx, caught);
  } else if (caught instanceof AppError) {
    status = caught.status;
    detail = caught.expose ? detailOf(caught) : (STATUS_MESSAGES[status] ?? 'Error');
  } else {
    const http = caught as HttpLike;
    const s = http.status ?? http.statusCode;
    if (typeof s === 'number' && s >= 400 && s < 500) {
      status = s;
      detail = s === 400 ? 'Request body is not valid JSON' : (STATUS_MESSAGES[s] ?? http.message ?? 'Error');
    }
  }
  ctx.status = status;
  ctx.body = { detail };
  if (status >= 500 && status !== 501)
    ctx.state.log.error({ err: caught, request_id: ctx.state.requestId }, 'request failed');
  ctx.state.error = caught;
}
