/**
 * A fork copies the agent's sandbox workspace (real Temporal, Postgres and
 * Docker engine, a scripted model asking for commands): the fork's first turn
 * sees the files as they were at the fork, whether the original's sandbox was
 * running or had stopped after its idle time; later writes in either stay
 * there. A sandbox agent's conversation that never ran a command forks to an
 * empty workspace. A copy that fails makes no fork.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONVERSATIONS as C } from '../../helpers/factories/content.js';
import { noTemporal } from '../../helpers/services.js';
import { buildImage, docker, dockerUnavailableReason } from '../sandbox/docker-harness.js';
import { sentMessages, useSessionWorld, waitFor, type Fixture } from './session-harness.js';

const skip = noTemporal() || Boolean(await dockerUnavailableReason());
const INSTALLATION = `fork-test-${randomUUID().slice(0, 8)}`;
const tmpRoot = mkdtempSync(path.join(os.tmpdir(), 'fork-sbx-'));

const bash = (code: string) => ({
  reply: { tool_calls: [{ name: 'execute_bash_commands', arguments: { code } }] },
});

/** The newest sandbox tool result the model was sent in request i. */
function lastCommandResult(fx: Fixture, i: number): { stdout: string; stderr: string; exit_code: number } {
  const results = sentMessages(fx.vendor, i).filter((m) => m.role === 'tool');
  return JSON.parse(String(results.at(-1)?.content)) as { stdout: string; stderr: string; exit_code: number };
}

/** One turn running `code` in the sandbox; answers the command's result. */
async function runInSandbox(fx: Fixture, agentId: string, conversationId: string | undefined, code: string) {
  fx.vendor.reset();
  fx.vendor.script(bash(code), { reply: { text: 'done' } });
  const res = await fx.converse({
    agent_id: agentId,
    message: 'run it',
    ...(conversationId ? { conversation_id: conversationId } : {}),
  });
  expect(res.body.data.status).toBe('completed');
  return { conversationId: res.body.data.conversation_id, result: lastCommandResult(fx, 1) };
}

async function fork(fx: Fixture, conversationId: string, body: Record<string, unknown> = {}) {
  return fx.api.request<{ id: string }>(
    'POST',
    `${C}/${encodeURIComponent(conversationId)}/fork?project_id=${fx.projectId}`,
    body,
  );
}

async function sessionContainers(agentId: string, conversationId: string, running: boolean) {
  return docker.listContainers({
    all: !running,
    filters: JSON.stringify({
      label: [
        `agent-server.installation=${INSTALLATION}`,
        `agent-server.agent-id=${agentId}`,
        `agent-server.conversation-id=${conversationId}`,
      ],
    }),
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

describe.skipIf(skip)('fork: the sandbox workspace goes with the transcript', () => {
  beforeAll(() => buildImage(), 15 * 60_000);
  afterAll(async () => {
    await removeSandboxes();
    await rm(tmpRoot, { recursive: true, force: true });
  });

  const world = useSessionWorld({
    SANDBOX_ENABLED: 'true',
    SANDBOX_BACKEND: 'docker',
    SANDBOX_HOST_DIR: path.join(tmpRoot, 'hosts'),
    DATA_DIR: path.join(tmpRoot, 'data'),
    SANDBOX_TOKEN_SECRET: 'fork-sandbox-test-secret-0123456789abcdef',
    SANDBOX_INSTALLATION: INSTALLATION,
    SANDBOX_POOL_SIZE: '0',
    SANDBOX_READY_TIMEOUT_MS: '20000',
    SANDBOX_IDLE_TIMEOUT_MS: '1500',
  });

  it("a fork of a running sandbox's session sees its files; later writes on either side stay there", async () => {
    const { fx } = world;
    const agent = await fx.agent({ sandbox: { enabled: true } }, 'Use the sandbox.');
    const original = await runInSandbox(
      fx,
      agent.id,
      undefined,
      'mkdir -p /sandbox/workspace/notes && echo original > /sandbox/workspace/notes/a.txt',
    );
    expect(original.result.exit_code).toBe(0);

    const forked = await fork(fx, original.conversationId);
    expect(forked.status).toBe(200);
    const forkId = forked.body.data.id;

    const inFork = await runInSandbox(
      fx,
      agent.id,
      forkId,
      'cat notes/a.txt && echo forked > notes/a.txt && echo new > b.txt && stat -c %U notes/a.txt',
    );
    expect(inFork.result.stdout.split('\n').slice(0, 2)).toEqual(['original', 'sandbox']);
    expect(inFork.result.exit_code).toBe(0);

    const back = await runInSandbox(fx, agent.id, original.conversationId, 'cat notes/a.txt; ls b.txt');
    expect(back.result.stdout.trim()).toBe('original');
    expect(back.result.stderr).toContain('b.txt');

    // And the other way: a write in the original after the fork does not reach the fork.
    await runInSandbox(fx, agent.id, original.conversationId, 'echo late > late.txt');
    const late = await runInSandbox(fx, agent.id, forkId, 'cat notes/a.txt; ls late.txt');
    expect(late.result.stdout.trim()).toBe('forked');
    expect(late.result.stderr).toContain('late.txt');
  });

  it("a fork made while the original's sandbox is stopped (idle shutdown) copies its workspace volume", async () => {
    const { fx } = world;
    const agent = await fx.agent({ sandbox: { enabled: true } }, 'Use the sandbox.');
    const original = await runInSandbox(fx, agent.id, undefined, 'echo kept > kept.txt');
    await waitFor(
      async () =>
        (await sessionContainers(agent.id, original.conversationId, true)).length === 0 ? true : undefined,
      30_000,
      'the sandbox to shut down when idle',
    );

    const forked = await fork(fx, original.conversationId);
    expect(forked.status).toBe(200);
    // The fork started no sandbox of the original's (nor of its own: the copy is not a sandbox).
    expect(await sessionContainers(agent.id, original.conversationId, true)).toEqual([]);
    expect(await sessionContainers(agent.id, forked.body.data.id, false)).toEqual([]);

    const inFork = await runInSandbox(fx, agent.id, forked.body.data.id, 'cat kept.txt');
    expect(inFork.result.stdout.trim()).toBe('kept');
  });

  it('a sandbox agent whose conversation never ran a command forks to an empty workspace', async () => {
    const { fx } = world;
    const agent = await fx.agent({ sandbox: { enabled: true } }, 'Use the sandbox.');
    fx.vendor.script({ reply: { text: 'hello' } });
    const first = await fx.converse({ agent_id: agent.id, message: 'hi' });
    expect(first.body.data.status).toBe('completed');

    const forked = await fork(fx, first.body.data.conversation_id);
    expect(forked.status).toBe(200);
    const inFork = await runInSandbox(fx, agent.id, forked.body.data.id, 'ls -A | wc -l');
    expect(inFork.result.stdout.trim()).toBe('0');
  });

  it('a workspace that cannot be copied (a file the sandbox user cannot read) makes no fork: 502, and the same request works once it can', async () => {
    const { fx } = world;
    const agent = await fx.agent({ sandbox: { enabled: true } }, 'Use the sandbox.');
    const original = await runInSandbox(
      fx,
      agent.id,
      undefined,
      'echo secret > locked.txt && chmod 000 locked.txt',
    );
    const forkId = `fork-${randomUUID()}`;

    const refused = await fork(fx, original.conversationId, { conversation_id: forkId });
    expect(refused.status).toBe(502);
    expect(String(refused.body.errorDetails.workspace)).toContain('locked.txt');
    const gone = await fx.api.request('GET', `${C}/${forkId}?project_id=${fx.projectId}`);
    expect(gone.status).toBe(404);

    await runInSandbox(fx, agent.id, original.conversationId, 'chmod 600 locked.txt');
    const forked = await fork(fx, original.conversationId, { conversation_id: forkId });
    expect(forked.status, JSON.stringify(forked.body)).toBe(200);
    const inFork = await runInSandbox(fx, agent.id, forkId, 'cat locked.txt');
    expect(inFork.result.stdout.trim()).toBe('secret');
  });
});
