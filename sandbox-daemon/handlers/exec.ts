/**
 * POST /exec/bash and /exec/python: validates the body (contracts.ts), runs
 * the command, or with an execution `id` runs it at most once
 * (operations/exec-registry.ts). POST /exec/cancel `{id}` kills a running
 * execution's process group (a cancelled run's command): whoever waits for
 * it gets its result, as after a timeout's kill.
 */
import type { IncomingMessage } from 'node:http';
import type { DaemonConfig } from '../config.js';
import { parseExecBody } from '../contracts.js';
import { BadRequestError } from '../errors.js';
import { readJson } from '../http/body.js';
import type { RouteResult } from '../http/respond.js';
import { execCommand, type ExecContext } from '../operations/exec-command.js';
import { execFingerprint, type ExecRegistry } from '../operations/exec-registry.js';

export interface ExecDeps {
  config: DaemonConfig;
  exec: ExecContext;
  /** Executions by caller-chosen id (requests with `id`). */
  executions: ExecRegistry;
  /** Registers a running command's killer so shutdown can stop it. */
  trackProcess: (kill: () => void) => () => void;
  /** The killers of running executions, by id (POST /exec/cancel). */
  killers: Map<string, () => void>;
}

/** Tracks the command for shutdown and, under its execution id, for POST /exec/cancel. */
function tracking(deps: ExecDeps, id: string | undefined) {
  return (kill: () => void) => {
    const untrack = deps.trackProcess(kill);
    if (id !== undefined) deps.killers.set(id, kill);
    return () => {
      if (id !== undefined && deps.killers.get(id) === kill) deps.killers.delete(id);
      untrack();
    };
  };
}

export async function execRoute(
  req: IncomingMessage,
  kind: 'bash' | 'python',
  deps: ExecDeps,
): Promise<RouteResult> {
  const body = await readJson(req, deps.config.maxJsonBytes);
  const parsed = parseExecBody(body, kind === 'bash' ? 'command' : 'script', deps.config);
  const start = () => execCommand(deps.exec, kind, parsed.source, parsed, tracking(deps, parsed.id));
  if (parsed.id === undefined) return { statusCode: 200, body: await start() };
  const { result, reused } = await deps.executions.run(
    parsed.id,
    execFingerprint(kind, parsed.source, parsed.workdir, parsed.env),
    parsed.attachOnly,
    start,
  );
  return { statusCode: 200, body: reused ? { ...result, reused: true } : result };
}

/** POST /exec/cancel `{id}`: kills the execution if it is running; `cancelled` says whether it was. */
export async function cancelExecRoute(req: IncomingMessage, deps: ExecDeps): Promise<RouteResult> {
  const body = (await readJson(req, deps.config.maxJsonBytes)) as { id?: unknown } | null;
  if (typeof body?.id !== 'string' || body.id === '') throw new BadRequestError('id must be an execution id');
  const kill = deps.killers.get(body.id);
  kill?.();
  return { statusCode: 200, body: { id: body.id, cancelled: kill !== undefined } };
}
