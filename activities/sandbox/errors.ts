/**
 * Errors of the sandbox manager. Class names are stable: the activity layer
 * lists the permanent ones in `nonRetryableErrorTypes`, so renaming one is a
 * behaviour change. `permanent` says which those are.
 */

/** Base class of every sandbox manager error. */
export class SandboxError extends Error {
  /** True when retrying the same call cannot help. */
  readonly permanent: boolean = false;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Thrown by every call when SANDBOX_ENABLED is unset or false (docs/configuration.md#sandboxes). */
export class SandboxNotConfiguredError extends SandboxError {
  override readonly permanent = true;
  constructor() {
    super('sandbox backend is not configured');
  }
}

/** Thrown by loadSandboxConfig when a SANDBOX_* variable is invalid; the message is one line naming it. */
export class SandboxConfigError extends SandboxError {
  override readonly permanent = true;
}

/** Thrown by ensure when the sandbox cannot be created or its daemon exits while starting (missing image, bad command, crash loop). */
export class SandboxStartError extends SandboxError {
  override readonly permanent = true;
}

/** Thrown by ensure when the sandbox exists but its daemon did not answer /health within SANDBOX_READY_TIMEOUT_MS. */
export class SandboxNotReadyError extends SandboxError {}

/** Thrown when the daemon cannot be reached mid-call or answers 5xx; the sandbox may have died, and a retry recreates it. */
export class SandboxUnavailableError extends SandboxError {}

/** Thrown when the daemon rejects a request (400, 405, 413): a bad path, workdir, timeout or body. */
export class SandboxRequestError extends SandboxError {
  override readonly permanent = true;
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Thrown by readFile and deleteFile when the file does not exist (daemon 404). */
export class SandboxFileNotFoundError extends SandboxError {
  override readonly permanent = true;
}

/**
 * Thrown by exec/execPython with `attachOnly` when the sandbox does not know
 * the execution id (daemon 404 `unknown_execution`): the sandbox was recreated
 * since the command was sent (idle shutdown, crash, release), or its result
 * expired. The command may have partly run; it is not run again.
 */
export class SandboxExecutionUnknownError extends SandboxError {
  override readonly permanent = true;
  constructor(
    readonly executionId: string,
    message: string,
  ) {
    super(message);
  }
}

/** Thrown when the daemon refuses the token (401) even after the sandbox was recreated: managers disagree on SANDBOX_TOKEN_SECRET. */
export class SandboxAuthError extends SandboxError {
  override readonly permanent = true;
}

/**
 * Thrown by copyWorkspace when the copy failed for a reason a retry does not
 * change (a file the sandbox user cannot read, a missing image).
 */
export class SandboxCopyError extends SandboxError {
  override readonly permanent = true;
}

/** Thrown by copyWorkspace on a backend that cannot copy a workspace that exists (kubernetes). */
export class SandboxCopyUnsupportedError extends SandboxCopyError {}

/** Every error class a Temporal activity should not retry, by name. */
export const NON_RETRYABLE_SANDBOX_ERRORS = [
  SandboxNotConfiguredError.name,
  SandboxConfigError.name,
  SandboxStartError.name,
  SandboxRequestError.name,
  SandboxFileNotFoundError.name,
  SandboxExecutionUnknownError.name,
  SandboxAuthError.name,
  SandboxCopyError.name,
  SandboxCopyUnsupportedError.name,
] as const;
