import type { Context } from 'koa';
import { STATUS_MESSAGES } from '../../core/errors.js';

/** The response envelope (docs/api.md#envelope). */
export interface Envelope<T = unknown> {
  error: boolean;
  message: string;
  data: T | Record<string, never>;
  status: number;
  errorDetails: Record<string, unknown>;
}

export function success<T>(data: T, message = 'OK'): Envelope<T> {
  return { error: false, message, data, status: 200, errorDetails: {} };
}

export function failure(status: number, details: Record<string, unknown> = {}): Envelope {
  return {
    error: true,
    message: STATUS_MESSAGES[status] ?? (status >= 500 ? STATUS_MESSAGES[500]! : STATUS_MESSAGES[400]!),
    data: {},
    status,
    errorDetails: details,
  };
}

/** Every success is 200, creates included (docs/api.md#envelope). */
export function ok<T>(ctx: Context, data: T): void {
  ctx.status = 200;
  ctx.body = success(data);
}
