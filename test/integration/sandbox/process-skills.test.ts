/** The process backend links SandboxSpec.skillsDir beside the workspace (it has no /sandbox/skills). */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProcessSandboxManager } from '../../../activities/sandbox/process/manager.js';
import { loadSandboxConfig } from '../../../activities/sandbox/sandbox-config.js';
import { newSession, repoRoot, silentLogger, TEST_SECRET } from './docker-harness.js';

describe('process sandbox skills', () => {
  let dir: string;
  let manager: ProcessSandboxManager;
  beforeAll(async () => {
    execFileSync(process.execPath, [path.join(repoRoot, 'sandbox-daemon/bundle.mjs')], { stdio: 'ignore' });
    dir = await mkdtemp(path.join(os.tmpdir(), 'sbx-proc-skills-'));
    const config = loadSandboxConfig({ SANDBOX_ENABLED: 'true', SANDBOX_BACKEND: 'process', DATA_DIR: dir });
    manager = new ProcessSandboxManager(config, silentLogger, TEST_SECRET);
  });
  afterAll(async () => {
    for (const info of await manager.list()) await manager.destroy(info.session);
    await rm(dir, { recursive: true, force: true });
  });

  it('shows the skills folder, later changes included, at ../skills of the workspace', async () => {
    const skills = path.join(dir, 'agent-skills');
    await mkdir(path.join(skills, 'csv'), { recursive: true });
    await writeFile(path.join(skills, 'csv', 'SKILL.md'), 'v1\n');
    const session = newSession();
    const spec = { skillsDir: skills };
    await manager.ensure(session, spec);
    const cat = async () =>
      (await manager.exec(session, { command: 'cat ../skills/csv/SKILL.md' }, spec)).stdout;
    expect(await cat()).toBe('v1\n');
    await writeFile(path.join(skills, 'csv', 'SKILL.md'), 'v2\n');
    expect(await cat()).toBe('v2\n');
    await expect(
      manager.ensure(newSession(), { skillsDir: skills, skills: [{ name: 'x', hostPath: skills }] }),
    ).rejects.toThrow(/skillsDir or per-skill mounts/);
  });
});
