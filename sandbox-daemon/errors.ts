/**
 * Errors of the sandbox daemon. Each carries the HTTP status and the stable
 * `code` of the `{error: {code, message}}` body the daemon answers with.
 */

/** Base class: thrown by an operation when a request cannot be served; `status` and `code` go on the wire. */
export class DaemonError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** Thrown when the request body or a parameter is malformed (400). */
export class BadRequestError extends DaemonError {
  constructor(message: string, code = 'bad_request') {
    super(400, code, message);
  }
}

/** Thrown when a file path would leave the sandbox root: `..`, absolute, encoded traversal, NUL, or a symlink pointing outside (400). */
export class PathEscapeError extends DaemonError {
  constructor(message = 'path escapes the sandbox root') {
    super(400, 'path_escape', message);
  }
}

/** Thrown when the bearer token is missing or wrong (401). */
export class InvalidTokenError extends DaemonError {
  constructor() {
    super(401, 'unauthorized', 'missing or invalid bearer token');
  }
}

/** Thrown when a file to read or delete does not exist (404). */
export class FileNotFoundError extends DaemonError {
  constructor(path: string) {
    super(404, 'not_found', `no such file: ${path}`);
  }
}

/** Thrown when a route exists but not for the request's method (405); `allowed` lists its methods. */
export class MethodNotAllowedError extends DaemonError {
  constructor(allowed: string) {
    super(405, 'method_not_allowed', `allowed: ${allowed}`);
  }
}

/** Thrown when a request body exceeds its size cap (413). */
export class PayloadTooLargeError extends DaemonError {
  constructor(limit: number) {
    super(413, 'payload_too_large', `request body exceeds ${limit} bytes`);
  }
}

/** Thrown when an execution id is reused for a different command, script, workdir or env (409). */
export class ExecutionConflictError extends DaemonError {
  constructor(id: string) {
    super(
      409,
      'execution_conflict',
      `execution "${id}" was started with a different command, script, workdir or env; use a new id`,
    );
  }
}

/** Thrown for `attach_only` when this daemon has no execution with the id: never started here, or forgotten after the retention period (404). */
export class UnknownExecutionError extends DaemonError {
  constructor(id: string) {
    super(
      404,
      'unknown_execution',
      `no execution "${id}" in this sandbox: it was never started here, or this sandbox was recreated since, or its result expired`,
    );
  }
}
