/**
 * Errors that reach the client. The error middleware turns every one of them
 * into the envelope; `expose` decides whether the message may be shown.
 */
export interface FieldError {
  field: string;
  message: string;
  type: string;
}

export const STATUS_MESSAGES: Record<number, string> = {
  400: 'Invalid request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  408: 'Request timeout',
  409: 'Conflict',
  413: 'Payload too large',
  415: 'Unsupported media type',
  421: 'Misdirected request',
  429: 'Too many requests',
  500: 'Internal server error',
  501: 'Not implemented',
  502: 'Bad gateway',
  503: 'Service unavailable',
};

export class AppError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly expose = status < 500,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** Thrown when a request's params, query or body fail validation (400); `fields` names each problem. */
export class ValidationError extends AppError {
  constructor(readonly fields: FieldError[]) {
    super(400, STATUS_MESSAGES[400]!, { fields });
  }
  static field(field: string, message: string, type = 'any.invalid'): ValidationError {
    return new ValidationError([{ field, message, type }]);
  }
}

/** Thrown when the resource named in the path (or `?project_id=`) does not exist (404). */
export class NotFoundError extends AppError {
  constructor(what?: string) {
    super(404, STATUS_MESSAGES[404]!, what ? { resource: what } : {});
  }
}

/** Thrown on a uniqueness or reference conflict (409); details say with what. */
export class ConflictError extends AppError {
  constructor(details: Record<string, unknown> = {}) {
    super(409, STATUS_MESSAGES[409]!, details);
  }
}

/** Thrown when the request lacks valid credentials (401). */
export class UnauthorizedError extends AppError {
  constructor() {
    super(401, STATUS_MESSAGES[401]!);
  }
}

/** Thrown when the caller is known but may not do this (403); `reason` says what is missing. */
export class ForbiddenError extends AppError {
  constructor(reason: string, details: Record<string, unknown> = {}) {
    super(403, STATUS_MESSAGES[403]!, { reason, ...details });
  }
}

/** Thrown when a dependency (Postgres, Temporal) is unavailable (503); details name what is down. */
export class ServiceUnavailableError extends AppError {
  constructor(details: Record<string, unknown> = {}) {
    super(503, STATUS_MESSAGES[503]!, details, true);
  }
}

/**
 * Thrown when an upstream (an MCP server being inspected) fails in a way the
 * caller should see (502). Not the model-call failure type: that is
 * core/llm/errors.ts's UpstreamError.
 */
export class BadGatewayError extends AppError {
  constructor(details: Record<string, unknown> = {}) {
    super(502, STATUS_MESSAGES[502]!, details, true);
  }
}

/** True for a Postgres unique violation; services turn it into a 409 naming the field. */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string }).code === '23505';
}

/** A row referring to one that is gone (or going: deleted in a transaction it waited for). */
export function isForeignKeyViolation(err: unknown): boolean {
  return (err as { code?: string }).code === '23503';
}
