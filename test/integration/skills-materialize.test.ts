/**
 * activities/skills/skills.ts against the real Postgres: the host folder the
 * sandbox mounts follows uploads, replacements and deletes in place, is left
 * alone when nothing changed, and ends consistent when workers race.
 */
import { lstat, mkdtemp, readdir, readFile, readlink, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentSkills, materializeSkills } from '../../activities/skills/skills.js';
import { createDb, type Db } from '../../core/db/knex.js';
import { SkillsService } from '../../api/services/skills.service.js';
import { uniqueName } from '../helpers/factories.js';
import { databaseUrl } from '../helpers/services.js';

const md = (name: string, description: string, body = '') =>
  `---\nname: ${name}\ndescription: ${description}\n---\n${body}`;

/** A project, model, prompt and agent row: the least a skill needs. */
async function insertAgentRow(db: Db): Promise<string> {
  const one = async (table: string, row: Record<string, unknown>) =>
    (await db(table).insert(row).returning<Array<{ id: string }>>('id'))[0]!.id;
  const project_id = await one('projects', { name: uniqueName('project') });
  const model_id = await one('models', {
    project_id,
    name: uniqueName('model'),
    model_id: 'm',
    provider_type: 'openai',
  });
  const prompt_id = await one('prompts', { project_id, name: uniqueName('prompt') });
  return one('agents', {
    project_id,
    name: uniqueName('agent'),
    model_id,
    prompt_id,
    sandbox: JSON.stringify({ enabled: true, docker_image: null, require_approval: false }),
  });
}

describe('materializeSkills', () => {
  let db: Db;
  let svc: SkillsService;
  let root: string;

  beforeAll(async () => {
    db = createDb(databaseUrl());
    svc = new SkillsService(db, { sandboxEnabled: true });
    root = path.join(await mkdtemp(path.join(os.tmpdir(), 'skills-mat-')), 'skills');
  });
  afterAll(async () => {
    await db.destroy();
    await rm(path.dirname(root), { recursive: true, force: true });
  });

  const put = (agentId: string, name: string, files: Record<string, unknown>) =>
    svc.put(agentId, undefined, name, { files: files as never });

  it('writes each skill under <root>/<agent>/<name>/, readable by others, and follows changes in place', async () => {
    const agentId = await insertAgentRow(db);
    await put(agentId, 'csv', {
      'SKILL.md': md('csv', 'CSV files', 'v1'),
      'scripts/clean.sh': { content: 'echo hi\n', executable: true },
    });
    await put(agentId, 'pdf', { 'SKILL.md': md('pdf', 'PDF forms') });
    expect(await agentSkills(db, agentId)).toEqual([
      { name: 'csv', description: 'CSV files' },
      { name: 'pdf', description: 'PDF forms' },
    ]);

    const dir = await materializeSkills(db, agentId, root);
    expect(dir).toBe(path.join(path.resolve(root), agentId));
    expect(await readFile(path.join(dir, 'csv/SKILL.md'), 'utf8')).toBe(md('csv', 'CSV files', 'v1'));
    expect(await readFile(path.join(dir, 'pdf/SKILL.md'), 'utf8')).toBe(md('pdf', 'PDF forms'));
    expect((await stat(path.join(dir, 'csv/scripts/clean.sh'))).mode & 0o777).toBe(0o755);
    expect((await stat(path.join(dir, 'csv/SKILL.md'))).mode & 0o777).toBe(0o644);
    expect((await stat(path.join(dir, 'csv/scripts'))).mode & 0o777).toBe(0o755);
    expect((await stat(dir)).mode & 0o777).toBe(0o755);
    expect((await readdir(dir)).filter((e) => !e.startsWith('.')).sort()).toEqual(['csv', 'pdf']);

    // Nothing changed: nothing is rewritten.
    const before = await lstat(path.join(dir, 'csv'));
    const versionBefore = await stat(path.join(dir, 'csv/SKILL.md'));
    await materializeSkills(db, agentId, root);
    expect((await lstat(path.join(dir, 'csv'))).ino).toBe(before.ino);
    expect((await stat(path.join(dir, 'csv/SKILL.md'))).ino).toBe(versionBefore.ino);

    // Replace one, delete the other: same folder (inode), new content, old version gone.
    const dirIno = (await stat(dir)).ino;
    const oldTarget = await readlink(path.join(dir, 'csv'));
    await put(agentId, 'csv', { 'SKILL.md': md('csv', 'CSV files', 'v2') });
    await svc.delete(agentId, undefined, 'pdf');
    expect(await materializeSkills(db, agentId, root)).toBe(dir);
    expect((await stat(dir)).ino).toBe(dirIno);
    expect(await readFile(path.join(dir, 'csv/SKILL.md'), 'utf8')).toBe(md('csv', 'CSV files', 'v2'));
    await expect(stat(path.join(dir, 'csv/scripts'))).rejects.toThrow(/ENOENT/);
    await expect(lstat(path.join(dir, 'pdf'))).rejects.toThrow(/ENOENT/);
    await expect(stat(path.join(dir, oldTarget))).rejects.toThrow(/ENOENT/);
    expect(await readdir(path.join(dir, '.versions'))).toEqual([
      path.basename(await readlink(path.join(dir, 'csv'))),
    ]);
  });

  it('creates an empty folder for an agent without skills', async () => {
    const agentId = await insertAgentRow(db);
    const dir = await materializeSkills(db, agentId, root);
    expect((await readdir(dir)).filter((e) => !e.startsWith('.'))).toEqual([]);
    expect(await agentSkills(db, agentId)).toEqual([]);
  });

  it('ends consistent when several workers materialize at once', async () => {
    const agentId = await insertAgentRow(db);
    for (let i = 0; i < 5; i++)
      await put(agentId, `s${i}`, {
        'SKILL.md': md(`s${i}`, `skill ${i}`),
        'data.txt': 'x'.repeat(10_000 * i),
      });
    const workers = Array.from({ length: 4 }, () => createDb(databaseUrl(), { max: 2 }));
    try {
      const dirs = await Promise.all(workers.map((w) => materializeSkills(w, agentId, root)));
      expect(new Set(dirs).size).toBe(1);
      const dir = dirs[0]!;
      expect((await readdir(dir)).sort()).toEqual(['.versions', 's0', 's1', 's2', 's3', 's4']);
      expect(await readdir(path.join(dir, '.versions'))).toHaveLength(5);
      for (let i = 0; i < 5; i++)
        expect((await readFile(path.join(dir, `s${i}/data.txt`), 'utf8')).length).toBe(10_000 * i);
    } finally {
      await Promise.all(workers.map((w) => w.destroy()));
    }
  });
});
