/**
 * Wire contracts of the daemon (docs/interface.md#sandbox-daemon): request and answer shapes, and
 * the exec body validation. The platform (activities/sandbox/) imports the
 * shapes as types only; nothing else outside this folder imports daemon code
 * except tests.
 */
import { BadRequestError } from './errors.js';

/** Body of POST /exec/bash. `timeout` is in seconds (docs/api.md#durations: request fields named timeout are seconds). */
export interface ExecBashRequest {
  command: string;
  workdir?: string;
  env?: Record<string, string>;
  timeout?: number;
  /**
   * Execution id chosen by the caller (1–200 of `A-Za-z0-9._:/-`). A request
   * whose id is running or recently finished does not run anything: it gets
   * that execution's result, marked `reused` (operations/exec-registry.ts).
   */
  id?: string;
  /** Only with `id`: never start; 404 `unknown_execution` when this daemon does not know the id. */
  attach_only?: boolean;
}

/** Body of POST /exec/python. */
export interface ExecPythonRequest extends Omit<ExecBashRequest, 'command'> {
  script: string;
}

/** The sandbox tool's result plus the daemon's flags; the extra flags are present only when true. */
export interface CommandResult {
  stdout: string;
  stderr: string;
  exit_code: number;
  duration_ms: number;
  timed_out?: true;
  stdout_truncated?: true;
  stderr_truncated?: true;
  /** This request started nothing: the result is that of the execution with the same `id`, started by an earlier request. */
  reused?: true;
}

/** GET /health (no token). `running`: requests in flight; `pool` only on a pool sandbox. */
export interface HealthResponse {
  status: 'ok';
  version: string;
  running: number;
  idle_ms: number;
  pool?: 'claimed' | 'waiting';
}

/** Body of POST /claim (pool sandboxes): the session's token and idle timeout. Answer: `{claimed: true}`. */
export interface ClaimRequest {
  token: string;
  idle_timeout_ms: number;
}

export interface ErrorBody {
  error: { code: string; message: string };
}

export interface ExecOptions {
  workdir: string | undefined;
  env: Record<string, string>;
  timeoutMs: number;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** An execution id: the activity sends `<runId>:<step>:<toolCallId>`. */
export const EXEC_ID = /^[A-Za-z0-9._:/-]{1,200}$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Validates the shared exec fields. Unknown fields are rejected, as the API
 * does (docs/api.md#errors), so a typo such as `timout` fails loudly instead of being ignored.
 */
export function parseExecBody(
  body: unknown,
  main: 'command' | 'script',
  limits: { defaultTimeoutMs: number; maxTimeoutMs: number },
): { source: string; id: string | undefined; attachOnly: boolean } & ExecOptions {
  if (!isRecord(body)) throw new BadRequestError('body must be a JSON object');
  for (const key of Object.keys(body)) {
    if (![main, 'workdir', 'env', 'timeout', 'id', 'attach_only'].includes(key))
      throw new BadRequestError(`unknown field "${key}"`);
  }
  const id = body.id;
  if (id !== undefined && (typeof id !== 'string' || !EXEC_ID.test(id)))
    throw new BadRequestError('"id" must be a string of 1 to 200 characters from A-Z a-z 0-9 . _ : / -');
  const attachOnly = body.attach_only;
  if (attachOnly !== undefined && typeof attachOnly !== 'boolean')
    throw new BadRequestError('"attach_only" must be a boolean');
  if (attachOnly === true && id === undefined) throw new BadRequestError('"attach_only" needs an "id"');

  const source = body[main];
  if (typeof source !== 'string' || source.length === 0)
    throw new BadRequestError(`"${main}" must be a non-empty string`);
  if (source.includes('\0')) throw new BadRequestError(`"${main}" must not contain NUL bytes`);

  const workdir = body.workdir;
  if (workdir !== undefined && typeof workdir !== 'string')
    throw new BadRequestError('"workdir" must be a string');

  const env: Record<string, string> = {};
  if (body.env !== undefined) {
    if (!isRecord(body.env)) throw new BadRequestError('"env" must be an object of strings');
    for (const [key, value] of Object.entries(body.env)) {
      if (!ENV_NAME.test(key)) throw new BadRequestError(`"env" key "${key}" is not a valid variable name`);
      if (typeof value !== 'string' || value.includes('\0'))
        throw new BadRequestError(`"env.${key}" must be a string without NUL`);
      env[key] = value;
    }
  }

  let timeoutMs = limits.defaultTimeoutMs;
  if (body.timeout !== undefined) {
    const t = body.timeout;
    if (typeof t !== 'number' || !Number.isFinite(t) || t <= 0)
      throw new BadRequestError('"timeout" must be a positive number of seconds');
    timeoutMs = Math.round(t * 1000);
    if (timeoutMs > limits.maxTimeoutMs)
      throw new BadRequestError(`"timeout" must be at most ${limits.maxTimeoutMs / 1000} seconds`);
  }
  return {
    source,
    workdir: workdir || undefined,
    env,
    timeoutMs,
    id,
    attachOnly: attachOnly === true,
  };
}
