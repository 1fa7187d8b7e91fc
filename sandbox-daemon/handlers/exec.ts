/**
 * POST /exec/bash and /exec/python: validates the body (contracts.ts), runs
 * the command, or with an execution `id` runs it at most once
 * (operations/exec-registry.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { DaemonConfig } from '../config.js';
import { parseExecBody } from '../contracts.js';
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
}

export async function execRoute(
  req: IncomingMessage,
  kind: 'bash' | 'python',
  deps: ExecDeps,
): Promise<RouteResult> {
  const body = await readJson(req, deps.config.maxJsonBytes);
  const parsed = parseExecBody(body, kind === 'bash' ? 'command' : 'script', deps.config);
  const start = () => execCommand(deps.exec, kind, parsed.source, parsed, deps.trackProcess);
  if (parsed.id === undefined) return { statusCode: 200, body: await start() };
  const { result, reused } = await deps.executions.run(
    parsed.id,
    execFingerprint(kind, parsed.source, parsed.workdir, parsed.env),
    parsed.attachOnly,
    start,
  );
  return { statusCode: 200, body: reused ? { ...result, reused: true } : result };
}
