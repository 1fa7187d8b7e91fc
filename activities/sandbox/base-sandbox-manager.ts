/**
 * What every backend shares: calls go straight to the last known endpoint and
 * fall back to `ensure` when the daemon is gone (idle shutdown, crash, kill).
 * The in-process handle cache is only a shortcut: it is never trusted over
 * the backend, so two manager processes stay correct without coordinating.
 */
import { sandboxEnsureSpan, sandboxExecSpan, sandboxFileSpan } from '../../core/telemetry/tool-spans.js';
import type { Logger } from '../../core/logger.js';
import { metrics } from '../../core/telemetry/metrics.js';
import { errorName } from '../../core/telemetry/metrics/genai.js';
import type { ExecBashRequest, ExecPythonRequest } from '../../sandbox-daemon/contracts.js';
import {
  daemonRequest,
  DaemonAuthRejectedError,
  DaemonUnreachableError,
  encodeFilePath,
  parseCommandResult,
  raiseForStatus,
} from './daemon-client.js';
import { SandboxAuthError } from './errors.js';
import type { SandboxConfig } from './sandbox-config.js';
import type {
  CommandResult,
  ExecRequest,
  PythonRequest,
  SandboxHandle,
  SandboxInfo,
  SandboxManager,
  SandboxSession,
  SandboxSpec,
} from './sandbox-manager.js';
import { sandboxName } from './sandbox-manager.js';
import { deriveToken } from './sandbox-token.js';

export type SandboxLogger = Pick<Logger, 'info' | 'warn' | 'error'>;

/** Margin over a command's own timeout for the HTTP call carrying it. */
const HTTP_MARGIN_MS = 15_000;
const FILE_TIMEOUT_MS = 120_000;
/** A cancel is a kill signal: the daemon answers at once when it is there at all. */
const CANCEL_TIMEOUT_MS = 5_000;

export abstract class BaseSandboxManager implements SandboxManager {
  abstract readonly backend: 'docker' | 'kubernetes' | 'process';
  private readonly handles = new Map<string, SandboxHandle>();
  private readonly inflight = new Map<string, Promise<SandboxHandle>>();

  constructor(
    protected readonly config: SandboxConfig,
    protected readonly logger: SandboxLogger,
    private readonly tokenSecret: string,
  ) {}

  /** The backend's idempotent create-or-adopt; called at most once at a time per session in this process. */
  protected abstract ensureSandbox(
    session: SandboxSession,
    spec: SandboxSpec,
    name: string,
    token: string,
  ): Promise<SandboxHandle>;
  protected abstract releaseSandbox(session: SandboxSession, name: string): Promise<void>;
  protected abstract destroySandbox(session: SandboxSession, name: string): Promise<void>;
  abstract list(): Promise<SandboxInfo[]>;

  protected tokenFor(name: string): string {
    return deriveToken(this.tokenSecret, name);
  }

  /** The first life-cycle rule (docs/interface.md#sandbox-life-cycle), in a `sandbox.ensure` span saying whether a sandbox was created. */
  ensure(session: SandboxSession, spec: SandboxSpec = {}): Promise<SandboxHandle> {
    return sandboxEnsureSpan(sandboxName(session), () => this.ensureOnce(session, spec));
  }

  private ensureOnce(session: SandboxSession, spec: SandboxSpec): Promise<SandboxHandle> {
    const name = sandboxName(session);
    // Ten concurrent calls in one process share one backend round; other processes are arbitrated by the backend.
    let pending = this.inflight.get(name);
    if (!pending) {
      // Timed and counted once per backend round, however many callers share it.
      const started = performance.now();
      const took = () => (performance.now() - started) / 1000;
      pending = this.ensureSandbox(session, spec, name, this.tokenFor(name))
        .then(
          (handle) => {
            this.handles.set(name, handle);
            const result = handle.pooled ? 'pool' : handle.created ? 'created' : 'existing';
            metrics().sandbox.ensured(this.backend, took(), result);
            return handle;
          },
          (err: unknown) => {
            metrics().sandbox.ensureFailed(this.backend, took(), err);
            throw err;
          },
        )
        .finally(() => this.inflight.delete(name));
      this.inflight.set(name, pending);
    }
    return pending;
  }

  private async withDaemon<T>(
    session: SandboxSession,
    spec: SandboxSpec | undefined,
    fn: (handle: SandboxHandle) => Promise<T>,
  ): Promise<T> {
    const name = sandboxName(session);
    let handle = this.handles.get(name) ?? (await this.ensure(session, spec));
    let authRetried = false;
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn(handle);
      } catch (err) {
        if (err instanceof DaemonUnreachableError && attempt < 3) {
          // The daemon is gone (idle shutdown, crash, kill) and the request never reached it: recreate and resend.
          // Only this error: a connection that broke after the request was sent (SandboxUnavailableError) may
          // have started a command, so it goes up to the caller, whose retry re-sends the same execution id.
          this.handles.delete(name);
          handle = await this.ensure(session, spec);
          continue;
        }
        if (err instanceof DaemonAuthRejectedError) {
          if (authRetried)
            throw new SandboxAuthError(
              `sandbox ${name} rejects our token; do all managers share SANDBOX_TOKEN_SECRET?`,
            );
          // A sandbox started under another secret (rotated): replace it; the workspace stays.
          authRetried = true;
          this.logger.warn({ sandbox: name }, 'sandbox rejected our token; recreating it');
          await this.release(session);
          handle = await this.ensure(session, spec);
          continue;
        }
        throw err;
      }
    }
  }

  private async runCommand(
    kind: 'bash' | 'python',
    session: SandboxSession,
    body: ExecRequest | PythonRequest,
    spec?: SandboxSpec,
  ): Promise<CommandResult> {
    const timeoutMs =
      (body.timeout !== undefined ? body.timeout * 1000 : this.config.commandTimeoutMs) + HTTP_MARGIN_MS;
    const { attachOnly, ...fields } = body;
    const payload: ExecBashRequest | ExecPythonRequest = {
      ...fields,
      timeout: body.timeout ?? this.config.commandTimeoutMs / 1000,
      ...(attachOnly ? { attach_only: true } : {}),
    };
    // withDaemon resends only when the request never reached the daemon. With an `id`, a resend to a
    // recreated sandbox starts the command there (it never ran: the old daemon was not reached), or,
    // with attachOnly, answers unknown_execution: the new daemon's registry is empty.
    const started = performance.now();
    const took = () => (performance.now() - started) / 1000;
    const result = await this.withDaemon(session, spec, async (h) => {
      const res = await daemonRequest(h.endpoint, {
        method: 'POST',
        path: `/exec/${kind}`,
        token: h.token,
        body: JSON.stringify(payload),
        contentType: 'application/json',
        timeoutMs,
      });
      raiseForStatus(res, `exec in sandbox ${h.name}`, body.id);
      return parseCommandResult(res);
    }).catch((err: unknown) => {
      metrics().sandbox.command(this.backend, kind, took(), errorName(err));
      throw err;
    });
    metrics().sandbox.command(this.backend, kind, took(), result.timed_out ? 'timeout' : undefined);
    return result;
  }

  exec(session: SandboxSession, request: ExecRequest, spec?: SandboxSpec): Promise<CommandResult> {
    return sandboxExecSpan(sandboxName(session), request.command, () =>
      this.runCommand('bash', session, request, spec),
    );
  }

  async cancelExec(session: SandboxSession, id: string): Promise<boolean> {
    const handle = this.handles.get(sandboxName(session));
    if (!handle) return false;
    const res = await daemonRequest(handle.endpoint, {
      method: 'POST',
      path: '/exec/cancel',
      token: handle.token,
      body: JSON.stringify({ id }),
      contentType: 'application/json',
      timeoutMs: CANCEL_TIMEOUT_MS,
    });
    // A daemon from before POST /exec/cancel answers 404: its command runs to its end.
    if (res.status === 404) return false;
    raiseForStatus(res, `cancel execution ${id}`);
    return (JSON.parse(res.body.toString('utf8')) as { cancelled?: boolean }).cancelled === true;
  }

  execPython(session: SandboxSession, request: PythonRequest, spec?: SandboxSpec): Promise<CommandResult> {
    return sandboxExecSpan(sandboxName(session), request.script, () =>
      this.runCommand('python', session, request, spec),
    );
  }

  readFile(session: SandboxSession, path: string, spec?: SandboxSpec): Promise<Buffer> {
    return sandboxFileSpan(sandboxName(session), 'read', path, () =>
      this.withDaemon(session, spec, async (h) => {
        const res = await daemonRequest(h.endpoint, {
          method: 'GET',
          path: encodeFilePath(path),
          token: h.token,
          timeoutMs: FILE_TIMEOUT_MS,
        });
        raiseForStatus(res, `read ${path}`);
        return res.body;
      }),
    );
  }

  writeFile(
    session: SandboxSession,
    path: string,
    data: Buffer | Uint8Array | string,
    spec?: SandboxSpec,
  ): Promise<void> {
    const body =
      typeof data === 'string'
        ? Buffer.from(data, 'utf8')
        : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    return sandboxFileSpan(sandboxName(session), 'write', path, () =>
      this.withDaemon(session, spec, async (h) => {
        const res = await daemonRequest(h.endpoint, {
          method: 'POST',
          path: encodeFilePath(path),
          token: h.token,
          body,
          timeoutMs: FILE_TIMEOUT_MS,
        });
        raiseForStatus(res, `write ${path}`);
      }),
    );
  }

  deleteFile(session: SandboxSession, path: string, spec?: SandboxSpec): Promise<void> {
    return sandboxFileSpan(sandboxName(session), 'delete', path, () =>
      this.withDaemon(session, spec, async (h) => {
        const res = await daemonRequest(h.endpoint, {
          method: 'DELETE',
          path: encodeFilePath(path),
          token: h.token,
          timeoutMs: FILE_TIMEOUT_MS,
        });
        raiseForStatus(res, `delete ${path}`);
      }),
    );
  }

  async release(session: SandboxSession): Promise<void> {
    const name = sandboxName(session);
    this.handles.delete(name);
    await this.releaseSandbox(session, name);
  }

  async destroy(session: SandboxSession): Promise<void> {
    const name = sandboxName(session);
    this.handles.delete(name);
    await this.destroySandbox(session, name);
  }

  close(): Promise<void> {
    this.handles.clear();
    return Promise.resolve();
  }
}
