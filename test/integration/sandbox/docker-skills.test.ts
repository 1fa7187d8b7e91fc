/**
 * Skills in a real Docker sandbox: the folder materializeSkills writes is
 * mounted read-only at /sandbox/skills, and skills uploaded, replaced or
 * deleted after the sandbox started show through without recreating it.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { materializeSkills } from '../../../activities/skills/skills.js';
import type { SandboxSession } from '../../../activities/sandbox/sandbox-manager.js';
import { createDb, type Db } from '../../../core/db/knex.js';
import { SkillsService } from '../../../api/services/skills.service.js';
import { uniqueName } from '../../helpers/factories.js';
import { databaseUrl } from '../../helpers/services.js';
import {
  buildImage,
  cleanup,
  dockerUnavailableReason,
  makeManager,
  type TestManager,
} from './docker-harness.js';

const unavailable = await dockerUnavailableReason();

const md = (name: string, body: string) =>
  `---\nname: ${name}\ndescription: test skill ${name}\n---\n${body}`;

async function insertAgentRow(db: Db): Promise<{ agentId: string; projectId: string }> {
  const one = async (table: string, row: Record<string, unknown>) =>
    (await db(table).insert(row).returning<Array<{ id: string }>>('id'))[0]!.id;
  const projectId = await one('projects', { name: uniqueName('project') });
  const model_id = await one('models', {
    project_id: projectId,
    name: uniqueName('model'),
    model_id: 'm',
    provider_type: 'openai',
  });
  const prompt_id = await one('prompts', { project_id: projectId, name: uniqueName('prompt') });
  const agentId = await one('agents', {
    project_id: projectId,
    name: uniqueName('agent'),
    model_id,
    prompt_id,
    sandbox: JSON.stringify({ enabled: true, docker_image: null, require_approval: false }),
  });
  return { agentId, projectId };
}

describe.skipIf(unavailable !== undefined)('skills in a docker sandbox', () => {
  let t: TestManager;
  let db: Db;
  let svc: SkillsService;
  let tmp: string;

  beforeAll(async () => {
    buildImage();
    t = makeManager({ SANDBOX_IDLE_TIMEOUT_MS: '600000', SANDBOX_POOL_SIZE: '0' });
    db = createDb(databaseUrl());
    svc = new SkillsService(db, { sandboxEnabled: true });
    tmp = await mkdtemp(path.join(os.tmpdir(), 'sbx-skills-'));
    await chmod(tmp, 0o755); // the sandbox user (uid 1000) must reach the folders below
  }, 20 * 60_000);
  afterAll(async () => {
    await t?.manager.close();
    await cleanup();
    await db?.destroy();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('mounts the agent folder read-only and shows later changes without recreating the sandbox', async () => {
    const { agentId, projectId } = await insertAgentRow(db);
    const put = (name: string, files: Record<string, unknown>) =>
      svc.put(agentId, undefined, name, { files: files as never });
    await put('csv', {
      'SKILL.md': md('csv', 'Use pandas.\n'),
      'scripts/hello.sh': { content: 'echo hello from the skill\n', executable: true },
    });
    const root = path.join(tmp, 'skills');
    const session: SandboxSession = { projectId, agentId, conversationId: uniqueName('conv') };
    const spec = { skillsDir: await materializeSkills(db, agentId, root) };
    const handle = await t.manager.ensure(session, spec);
    const sh = async (command: string) => (await t.manager.exec(session, { command }, spec)).stdout;

    expect(await sh('cat /sandbox/skills/csv/SKILL.md')).toBe(md('csv', 'Use pandas.\n'));
    expect(await sh('/sandbox/skills/csv/scripts/hello.sh')).toBe('hello from the skill\n');
    expect(await sh('ls /sandbox/skills')).toBe('csv\n');
    const write = await t.manager.exec(session, {
      command: 'touch /sandbox/skills/csv/x; echo "exit=$?"; rm /sandbox/skills/csv; echo "exit=$?"',
    });
    expect(write.stdout).toBe('exit=1\nexit=1\n');
    expect(write.stderr).toMatch(/Read-only file system/);

    // Uploaded, replaced and deleted after the sandbox started: the worker re-materializes before the next command.
    await put('pdf', { 'SKILL.md': md('pdf', 'Fill forms.\n') });
    await put('csv', { 'SKILL.md': md('csv', 'Use polars now.\n') });
    expect(await materializeSkills(db, agentId, root)).toBe(spec.skillsDir);
    expect(await sh('cat /sandbox/skills/pdf/SKILL.md /sandbox/skills/csv/SKILL.md')).toBe(
      md('pdf', 'Fill forms.\n') + md('csv', 'Use polars now.\n'),
    );
    await svc.delete(agentId, undefined, 'pdf');
    await materializeSkills(db, agentId, root);
    expect(await sh('ls /sandbox/skills; test -e /sandbox/skills/pdf || echo pdf-gone')).toBe(
      'csv\npdf-gone\n',
    );

    const again = await t.manager.ensure(session, spec);
    expect(again).toMatchObject({ id: handle.id, created: false });
    await t.manager.destroy(session);
  });

  it('never hands a pool sandbox to a spec with skillsDir', async () => {
    const pooled = makeManager({ SANDBOX_POOL_SIZE: '1' }); // never filled: fits() is a pure check
    try {
      expect(pooled.manager.pool.fits({})).toBe(true);
      expect(pooled.manager.pool.fits({ skillsDir: tmp })).toBe(false);
    } finally {
      await pooled.manager.close();
    }
  });
});
