/**
 * The SandboxManager contract every backend implements, and the naming rules
 * they share. A session is one conversation of one agent in one project; it
 * maps to exactly one sandbox, whose name is a hash of the session so that
 * any manager process (or replica) derives the same name without coordination.
 */
import { createHash } from 'node:crypto';
import type { CommandResult } from '../../sandbox-daemon/contracts.js';
import type { SandboxLimits } from './sandbox-config.js';

export interface SandboxSession {
  projectId: string;
  agentId: string;
  conversationId: string;
}

/** A skill mounted read-only at /sandbox/skills/<name>/. */
export interface SkillMount {
  name: string;
  /** Docker and process backends: a folder on the host holding SKILL.md and friends. */
  hostPath?: string;
  /** Kubernetes backend: a ConfigMap in the sandbox namespace whose keys become the files. */
  configMap?: string;
}

export interface SandboxSpec {
  /** The agent's docker_image, else SANDBOX_DEFAULT_IMAGE. */
  image?: string;
  skills?: SkillMount[];
  /**
   * Docker and process backends: a host folder holding one folder per skill,
   * mounted read-only at /sandbox/skills as a whole, so skills added or changed
   * in it later appear in a running sandbox (see activities/skills/skills.ts).
   * Exclusive with `skills`. The Kubernetes backend ignores it.
   */
  skillsDir?: string;
  limits?: Partial<SandboxLimits>;
}

export type SandboxEndpoint = { kind: 'unix'; socketPath: string } | { kind: 'http'; url: string };

export interface SandboxHandle {
  /** Deterministic name from the session hash. */
  name: string;
  /** Backend id of the current incarnation (container id, pod uid, pid); changes when the sandbox is recreated. */
  id: string;
  endpoint: SandboxEndpoint;
  token: string;
  /** True when this call created the sandbox. */
  created: boolean;
  /** True when it was a pre-started pool sandbox this call claimed (docker). */
  pooled?: boolean;
}

export interface SandboxInfo {
  name: string;
  session: SandboxSession;
  /** Current incarnation, when compute exists. */
  id: string | undefined;
  state: 'running' | 'stopped' | 'absent';
  image: string | undefined;
  /** When it stopped (stopped sandboxes only, when known). */
  finishedAt: Date | undefined;
  /** Daemon-reported time since its last request (running sandboxes only, when reachable). */
  idleMs: number | undefined;
}

export interface ExecRequest {
  command: string;
  workdir?: string;
  env?: Record<string, string>;
  /** Seconds. */
  timeout?: number;
  /**
   * Execution id (1–200 of `A-Za-z0-9._:/-`), e.g. `<runId>:<step>:<toolCallId>`.
   * The daemon runs a command at most once per id: a repeat while it runs waits
   * for it, a repeat after it finished (within SANDBOX_EXEC_RETENTION_MS) gets
   * the kept result with `reused: true`. Same id, other command: SandboxRequestError 409.
   */
  id?: string;
  /**
   * Only with `id`: never start the command, only attach to it. When the
   * sandbox does not know the id (recreated since, or result expired) the call
   * throws SandboxExecutionUnknownError: the command may have partly run.
   */
  attachOnly?: boolean;
}

export interface PythonRequest extends Omit<ExecRequest, 'command'> {
  script: string;
}

/** What exec and execPython return: the daemon's answer, as it sends it (sandbox-daemon/contracts.ts). */
export type { CommandResult };

/** What copyWorkspace did: copied the files, or found no workspace to copy. */
export type WorkspaceCopy = 'copied' | 'absent';

export interface SandboxManager {
  readonly backend: 'docker' | 'kubernetes' | 'process' | 'disabled';
  /** Idempotent and safe under concurrency across processes; recreates a stopped sandbox on the same workspace. */
  ensure(session: SandboxSession, spec?: SandboxSpec): Promise<SandboxHandle>;
  exec(session: SandboxSession, request: ExecRequest, spec?: SandboxSpec): Promise<CommandResult>;
  execPython(session: SandboxSession, request: PythonRequest, spec?: SandboxSpec): Promise<CommandResult>;
  /**
   * Kills a running execution by its id (a cancelled run's command); false
   * when the sandbox is not running here or the execution is not running.
   * Never starts a sandbox. Absent on backends without sandboxes.
   */
  cancelExec?(session: SandboxSession, id: string): Promise<boolean>;
  readFile(session: SandboxSession, path: string, spec?: SandboxSpec): Promise<Buffer>;
  writeFile(
    session: SandboxSession,
    path: string,
    data: Buffer | Uint8Array | string,
    spec?: SandboxSpec,
  ): Promise<void>;
  deleteFile(session: SandboxSession, path: string, spec?: SandboxSpec): Promise<void>;
  /**
   * Copies one session's workspace, as it is now, into another session's
   * (a forked conversation's), whether the source's sandbox runs, stopped or
   * is gone; never starts either sandbox. 'absent' when the source has no
   * workspace. Files already in the target are overwritten by the source's.
   * SandboxCopyUnsupportedError on a backend that cannot (kubernetes, when
   * there is a workspace; see README), SandboxCopyError when the copy failed.
   * Absent on backends without sandboxes.
   */
  copyWorkspace?(from: SandboxSession, to: SandboxSession): Promise<WorkspaceCopy>;
  /** Removes the compute but keeps the workspace (what idle shutdown does, done from outside). */
  release(session: SandboxSession): Promise<void>;
  /** Removes compute and workspace: the conversation is gone. */
  destroy(session: SandboxSession): Promise<void>;
  /** Every sandbox this manager's backend knows, with or without compute. */
  list(): Promise<SandboxInfo[]>;
  /** Releases client resources (HTTP agents, watchers); sandboxes keep running, unclaimed pool sandboxes are removed. */
  close(): Promise<void>;
  /** Housekeeping the reaper runs each pass (docker: prune dead pool sandboxes, refill the pool). */
  maintain?(): Promise<void>;
  /** Docker: pool sandboxes waiting as last listed (undefined before the first listing), and SANDBOX_POOL_SIZE. */
  poolStats?(): { waiting: number | undefined; limit: number };
}

export const LABEL = {
  sandbox: 'agent-server.sandbox',
  session: 'agent-server.sandbox.session',
  project: 'agent-server.project-id',
  agent: 'agent-server.agent-id',
  conversation: 'agent-server.conversation-id',
  port: 'agent-server.sandbox.port',
  installation: 'agent-server.installation',
  /** On a pool sandbox, its container and volume: the pool incarnation id; on a session's workspace alias, the pool volume behind it. */
  pool: 'agent-server.sandbox.pool-id',
} as const;

export function sessionHash(session: SandboxSession): string {
  // JSON keeps the three ids unambiguous whatever characters they contain.
  return createHash('sha256')
    .update(JSON.stringify([session.projectId, session.agentId, session.conversationId]))
    .digest('hex')
    .slice(0, 24);
}

/** Valid as a Docker container name, a Kubernetes object name and a folder name. */
export function sandboxName(session: SandboxSession): string {
  return `agent-sandbox-${sessionHash(session)}`;
}

/** Labels identifying a session's objects; values are ids, never secrets. */
export function sessionLabels(session: SandboxSession): Record<string, string> {
  return {
    [LABEL.sandbox]: '1',
    [LABEL.session]: sessionHash(session),
    [LABEL.project]: session.projectId,
    [LABEL.agent]: session.agentId,
    [LABEL.conversation]: session.conversationId,
  };
}

export function sessionFromLabels(labels: Record<string, string> | undefined): SandboxSession | undefined {
  const projectId = labels?.[LABEL.project];
  const agentId = labels?.[LABEL.agent];
  const conversationId = labels?.[LABEL.conversation];
  if (projectId === undefined || agentId === undefined || conversationId === undefined) return undefined;
  return { projectId, agentId, conversationId };
}
