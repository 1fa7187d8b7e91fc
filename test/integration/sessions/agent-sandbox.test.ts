/**
 * The execute_bash_commands tool in real sessions (issue #7): real Temporal,
 * Postgres and Docker engine, a scripted model asking for commands.
 * - A file in the workspace survives the sandbox's idle shutdown; one in /tmp
 *   does not; the next call runs in a new container.
 * - Each command is its own activity in the workflow's history, with the
 *   command (input and summary) and the exit code (result).
 * - The worker SIGKILLed during a command: the retried activity attaches to
 *   the running execution instead of starting the command again.
 * - Skills uploaded for the agent are listed in the system prompt and
 *   readable (read-only) at /sandbox/skills/<name>/SKILL.md.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noTemporal, temporalAddress } from '../../helpers/services.js';
import { buildImage, docker, dockerUnavailableReason } from '../sandbox/docker-harness.js';
import {
  killHard,
  readSse,
  sentMessages,
  sessionEnv,
  spawnWorker,
  startFixture,
  startInProcessWorker,
  waitFor,
  type Fixture,
  type SseEvent,
} from './session-harness.js';

const skip = noTemporal() || Boolean(await dockerUnavailableReason());
const INSTALLATION = `sess-test-${randomUUID().slice(0, 8)}`;
const tmpRoot = mkdtempSync(path.join(os.tmpdir(), 'sess-sbx-'));

function sandboxEnv(extra: Record<string, string> = {}): Record<string, string> {
  return sessionEnv({
    SANDBOX_ENABLED: 'true',
    SANDBOX_BACKEND: 'docker',
    SANDBOX_HOST_DIR: path.join(tmpRoot, 'hosts'),
    DATA_DIR: path.join(tmpRoot, 'data'),
    SANDBOX_TOKEN_SECRET: 'session-sandbox-test-secret-0123456789',
    SANDBOX_INSTALLATION: INSTALLATION,
    SANDBOX_POOL_SIZE: '0',
    SANDBOX_READY_TIMEOUT_MS: '20000',
    ...extra,
  });
}

async function removeSandboxes(): Promise<void> {
  const filters = JSON.stringify({ label: [`agent-server.installation=${INSTALLATION}`] });
  for (const c of await docker.listContainers({ all: true, filters }))
    await docker
      .getContainer(c.Id)
      .remove({ force: true })
      .catch(() => {});
  const { Volumes } = await docker.listVolumes({ filters });
  for (const v of Volumes ?? [])
    await docker
      .getVolume(v.Name)
      .remove()
      .catch(() => {});
}

interface CommandOutput {
  stdout: string;
  stderr: string;
  exit_code: number;
  duration_ms: number;
}

/** The newest sandbox tool result the model was sent in request i (earlier turns' results come first in its history). */
function lastCommandResult(fx: Fixture, i: number): CommandOutput {
  const results = sentMessages(fx.vendor, i).filter((m) => m.role === 'tool');
  return JSON.parse(String(results.at(-1)?.content)) as CommandOutput;
}

const bash = (code: string) => ({
  reply: { tool_calls: [{ name: 'execute_bash_commands', arguments: { code } }] },
});

/** Decodes a Temporal JSON payload. */
function payload(p: { data?: Uint8Array | null } | undefined | null): unknown {
  return p?.data ? JSON.parse(new TextDecoder().decode(p.data)) : undefined;
}

/**
 * Streams a turn with a worker as its own process, SIGKILLs that worker once
 * the sandbox command has started, runs `meanwhile`, and starts another
 * worker; returns the turn's events. Workers go into `workers` for cleanup.
 */
async function killWorkerMidCommand(
  fx: Fixture,
  env: Record<string, string>,
  agentId: string,
  workers: Array<Awaited<ReturnType<typeof spawnWorker>>>,
  meanwhile: () => Promise<void> = async () => {},
): Promise<SseEvent[]> {
  const first = await spawnWorker(env);
  workers.push(first);
  const events: string[] = [];
  const reading = fx.stream({ agent_id: agentId, message: 'log' }, (ev) => events.push(ev.event));
  await waitFor(
    () => (events.includes('tool_call.started') ? true : undefined),
    60_000,
    'the command to start',
  );
  await new Promise((r) => setTimeout(r, 500));
  await killHard(first.child);
  await meanwhile();
  workers.push(await spawnWorker(env));
  return reading;
}

describe.skipIf(skip)('agent tools: the sandbox in a session', () => {
  beforeAll(() => buildImage(), 15 * 60_000);
  afterAll(async () => {
    await removeSandboxes();
    await rm(tmpRoot, { recursive: true, force: true });
  });

  describe('idle shutdown, history, skills', () => {
    let fx: Fixture;
    let worker: Awaited<ReturnType<typeof startInProcessWorker>>;
    let connection: Connection;
    let client: Client;
    const env = sandboxEnv({ SANDBOX_IDLE_TIMEOUT_MS: '1500' });

    beforeAll(async () => {
      fx = await startFixture(env);
      worker = await startInProcessWorker(env);
      connection = await Connection.connect({ address: temporalAddress()! });
      client = new Client({ connection });
    }, 60_000);
    afterAll(async () => {
      await worker?.stop();
      await fx?.close();
      await connection?.close();
    });

    it('a workspace file survives the idle shutdown, /tmp does not, the next call gets a new container; each command is an activity with its command and exit code', async () => {
      fx.vendor.reset();
      const agent = await fx.agent({ sandbox: { enabled: true } }, 'Use the sandbox.');
      fx.vendor.script(
        bash(
          'echo kept > /sandbox/workspace/keep.txt && echo gone > /tmp/gone.txt && cat /proc/sys/kernel/hostname',
        ),
        { reply: { text: 'written' } },
      );
      const first = await fx.converse({ agent_id: agent.id, message: 'write files' });
      expect(first.body.data.status).toBe('completed');
      const tools = fx.vendor.received[0]!.body.tools as Array<{
        function: { name: string; parameters: unknown };
      }>;
      expect(tools.map((t) => t.function.name)).toEqual(['execute_bash_commands']);
      expect(tools[0]!.function.parameters).toMatchObject({ required: ['code'] });
      const written = lastCommandResult(fx, 1);
      expect(written).toMatchObject({ exit_code: 0, stderr: '' });
      const firstHost = written.stdout.trim();

      // The daemon shuts down after 1.5 s idle: wait until no container of this session runs.
      await waitFor(
        async () => {
          const running = await docker.listContainers({
            filters: JSON.stringify({
              label: [`agent-server.installation=${INSTALLATION}`, `agent-server.agent-id=${agent.id}`],
            }),
          });
          return running.length === 0 ? true : undefined;
        },
        30_000,
        'the sandbox to shut down when idle',
      );

      fx.vendor.reset();
      fx.vendor.script(
        bash('cat /sandbox/workspace/keep.txt; cat /tmp/gone.txt; cat /proc/sys/kernel/hostname'),
        { reply: { text: 'read back' } },
      );
      const second = await fx.converse({
        agent_id: agent.id,
        conversation_id: first.body.data.conversation_id,
        message: 'read them back',
      });
      expect(second.body.data.status).toBe('completed');
      const read = lastCommandResult(fx, 1);
      const [kept, newHost] = read.stdout.trim().split('\n');
      expect(kept).toBe('kept');
      expect(read.stderr).toContain('/tmp/gone.txt: No such file or directory');
      expect(read.exit_code).toBe(0);
      expect(newHost).toBeTruthy();
      expect(newHost).not.toBe(firstHost); // a new container

      // The workflow's history: one runSandboxCommand activity per command, showing it.
      const history = await client.workflow.getHandle(second.body.data.workflow_id).fetchHistory();
      const scheduled = (history.events ?? []).filter(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runSandboxCommand',
      );
      const commands = scheduled.map(
        (e) =>
          (payload(e.activityTaskScheduledEventAttributes!.input!.payloads![0]) as { command: string })
            .command,
      );
      expect(commands.some((c) => c.startsWith('cat /sandbox/workspace/keep.txt'))).toBe(true);
      const summaries = scheduled.map((e) => JSON.stringify(payload(e.userMetadata?.summary) ?? ''));
      expect(summaries.some((s) => s.includes('cat /sandbox/workspace/keep.txt'))).toBe(true);
      const completed = (history.events ?? [])
        .map((e) => e.activityTaskCompletedEventAttributes)
        .filter(Boolean)
        .map((a) => payload(a!.result!.payloads![0]) as { exit_code?: number })
        .filter((r) => r && 'exit_code' in r);
      expect(completed.map((r) => r.exit_code)).toContain(0);
    });

    it('skills: listed in the system prompt with their path, readable and read-only in the sandbox, also in a sandbox that started before the first skill', async () => {
      fx.vendor.reset();
      const agent = await fx.agent({ sandbox: { enabled: true } }, 'Use skills.');
      // A sandbox starts while the agent has no skills (no mount), with a file in its workspace.
      fx.vendor.script(bash('echo before > /sandbox/workspace/before.txt'), { reply: { text: 'ok' } });
      const first = await fx.converse({ agent_id: agent.id, message: 'prepare' });
      expect(first.body.data.status).toBe('completed');
      expect(String(sentMessages(fx.vendor, 0).find((m) => m.role === 'system')?.content)).not.toContain(
        '/sandbox/skills',
      );
      fx.vendor.reset();
      const skill = [
        '---',
        'name: pdf-tools',
        'description: How to split and merge PDF files',
        '---',
        '# PDF tools',
        'Use qpdf to split files.',
      ].join('\n');
      const put = await fx.api.request('PUT', `/api/agent-server/agents/${agent.id}/skills/pdf-tools`, {
        files: { 'SKILL.md': skill, 'scripts/split.sh': 'qpdf --split-pages "$1"\n' },
      });
      expect(put.status).toBe(200);
      fx.vendor.script(
        bash(
          'cat /sandbox/skills/pdf-tools/SKILL.md && ls /sandbox/skills/pdf-tools/scripts && (echo x > /sandbox/skills/pdf-tools/new.txt) 2>&1; echo "write=$?"; cat /sandbox/workspace/before.txt',
        ),
        { reply: { text: 'I read the skill' } },
      );
      const res = await fx.converse({
        agent_id: agent.id,
        conversation_id: first.body.data.conversation_id,
        message: 'split a pdf',
      });
      expect(res.body.data.status).toBe('completed');
      const system = sentMessages(fx.vendor, 0).find((m) => m.role === 'system');
      expect(String(system?.content)).toContain('pdf-tools');
      expect(String(system?.content)).toContain('How to split and merge PDF files');
      expect(String(system?.content)).toContain('/sandbox/skills/pdf-tools/SKILL.md');
      expect(String(system?.content)).toContain('execute_bash_commands');
      const out = lastCommandResult(fx, 1);
      expect(out.stdout).toContain('Use qpdf to split files.');
      expect(out.stdout).toContain('split.sh');
      expect(out.stdout).toMatch(/Read-only file system/);
      expect(out.stdout).not.toContain('write=0');
      // The sandbox was replaced to mount the skills; the workspace stayed.
      expect(out.stdout).toContain('before');
    });

    it('sandbox.require_approval: the command waits for a person, then runs', async () => {
      fx.vendor.reset();
      const agent = await fx.agent(
        { sandbox: { enabled: true, require_approval: true } },
        'Use the sandbox.',
      );
      fx.vendor.script(bash('echo approved-run'), { reply: { text: 'ran it' } });
      const res = await fx.converse({ agent_id: agent.id, message: 'run it' });
      expect(res.body.data.status).toBe('awaiting_approval');
      const pending = (
        res.body.data as unknown as {
          pending_approvals: Array<{ id: string; name: string; arguments: string }>;
        }
      ).pending_approvals;
      expect(pending).toEqual([
        expect.objectContaining({
          name: 'execute_bash_commands',
          arguments: JSON.stringify({ code: 'echo approved-run' }),
        }),
      ]);
      expect(fx.vendor.received).toHaveLength(1);
      const done = await fx.api.request<{ status: string }>(
        'POST',
        `/api/agent-server/runs/${res.body.data.run_id}/approvals`,
        { approved_call_ids: [pending[0]!.id], wait: true },
      );
      expect(done.body.data.status).toBe('completed');
      expect(lastCommandResult(fx, 1)).toMatchObject({ stdout: 'approved-run\n', exit_code: 0 });
    });
  });

  it('the worker SIGKILLed during a sandbox command: the retried activity attaches to it, the command runs once', async () => {
    const env = sandboxEnv({ SESSION_TOOL_HEARTBEAT_TIMEOUT_MS: '2000', SANDBOX_IDLE_TIMEOUT_MS: '600000' });
    const fx = await startFixture(env);
    const workers: Array<Awaited<ReturnType<typeof spawnWorker>>> = [];
    try {
      const agent = await fx.agent({ sandbox: { enabled: true } }, 'Use the sandbox.');
      fx.vendor.script(
        bash(
          'echo start >> /sandbox/workspace/log.txt; sleep 5; echo end >> /sandbox/workspace/log.txt; wc -l < /sandbox/workspace/log.txt',
        ),
        { reply: { text: 'logged' } },
        bash('cat /sandbox/workspace/log.txt'),
        { reply: { text: 'checked' } },
      );
      const streamed = await killWorkerMidCommand(fx, env, agent.id, workers);
      expect(streamed.at(-1)?.event).toBe('run.completed');
      const result = lastCommandResult(fx, 1);
      // The retry got the first execution's result: the command ran once, whole.
      expect(result).toMatchObject({ exit_code: 0, stdout: '2\n' });
      expect(streamed.filter((e) => e.event === 'tool_call.started')).toHaveLength(1);
      expect(streamed.filter((e) => e.event === 'tool_call.completed')).toHaveLength(1);

      // The next turn reads the log: one start, one end.
      const next = await fx.converse({
        agent_id: agent.id,
        conversation_id: String(streamed[0]!.data.conversation_id),
        message: 'check',
      });
      expect(next.body.data.status).toBe('completed');
      const log = lastCommandResult(fx, 3);
      expect(log.stdout).toBe('start\nend\n');
      const runEvents = await readSse(
        `${fx.api.url}/api/agent-server/runs/${String(streamed[0]!.data.run_id)}/events`,
        {},
      );
      expect(runEvents.filter((e) => e.event === 'tool_call.completed')).toHaveLength(1);
      // The activity really was retried, and the retry attached to the first execution.
      const connection = await Connection.connect({ address: temporalAddress()! });
      try {
        const workflowId = `session/${agent.id}/${String(streamed[0]!.data.conversation_id)}`;
        const history = await new Client({ connection }).workflow.getHandle(workflowId).fetchHistory();
        const events = history.events ?? [];
        const scheduledId = events.find(
          (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runSandboxCommand',
        )?.eventId;
        const started = events.find(
          (e) =>
            e.activityTaskStartedEventAttributes?.scheduledEventId?.toString() === scheduledId?.toString(),
        );
        expect(started?.activityTaskStartedEventAttributes?.attempt).toBeGreaterThanOrEqual(2);
        const completed = events.find(
          (e) =>
            e.activityTaskCompletedEventAttributes?.scheduledEventId?.toString() === scheduledId?.toString(),
        );
        expect(payload(completed?.activityTaskCompletedEventAttributes?.result?.payloads?.[0])).toMatchObject(
          {
            exit_code: 0,
            reused: true,
          },
        );
      } finally {
        await connection.close();
      }
    } finally {
      for (const w of workers) await killHard(w.child);
      await fx.close();
    }
  }, 120_000);

  it('the worker SIGKILLed during a command and the sandbox gone before the retry: the model is told the command was interrupted, it is not run again', async () => {
    const env = sandboxEnv({ SESSION_TOOL_HEARTBEAT_TIMEOUT_MS: '2000', SANDBOX_IDLE_TIMEOUT_MS: '600000' });
    const fx = await startFixture(env);
    const workers: Array<Awaited<ReturnType<typeof spawnWorker>>> = [];
    try {
      const agent = await fx.agent({ sandbox: { enabled: true } }, 'Use the sandbox.');
      fx.vendor.script(
        bash('echo start >> /sandbox/workspace/log.txt; sleep 30; echo end >> /sandbox/workspace/log.txt'),
        { reply: { text: 'I will check the workspace' } },
        bash('cat /sandbox/workspace/log.txt'),
        { reply: { text: 'checked' } },
      );
      const streamed = await killWorkerMidCommand(fx, env, agent.id, workers, async () => {
        // The sandbox dies too (host trouble, an operator): the command's fate is unknown.
        const filters = JSON.stringify({
          label: [`agent-server.installation=${INSTALLATION}`, `agent-server.agent-id=${agent.id}`],
        });
        for (const c of await docker.listContainers({ all: true, filters }))
          await docker.getContainer(c.Id).remove({ force: true });
      });
      expect(streamed.at(-1)?.event).toBe('run.completed');
      const results = sentMessages(fx.vendor, 1).filter((m) => m.role === 'tool');
      const answer = JSON.parse(String(results.at(-1)?.content)) as { error?: string };
      expect(answer.error).toContain('interrupted');
      const completed = streamed.filter((e) => e.event === 'tool_call.completed');
      expect(completed).toHaveLength(1);
      expect(completed[0]!.data).toMatchObject({ is_error: true, interrupted: true });
      // It did not run a second time in the new sandbox: the log holds the first attempt's line only.
      const next = await fx.converse({
        agent_id: agent.id,
        conversation_id: String(streamed[0]!.data.conversation_id),
        message: 'check',
      });
      expect(next.body.data.status).toBe('completed');
      expect(lastCommandResult(fx, 3).stdout).toBe('start\n');
    } finally {
      for (const w of workers) await killHard(w.child);
      await fx.close();
    }
  }, 120_000);
});
