/**
 * The worker's side of skills: what the system prompt lists, and the host
 * folder mounted read-only at /sandbox/skills in the agent's sandboxes.
 *
 * Layout of `<root>/<agentId>/` (the folder that is mounted, never renamed, so
 * a running sandbox sees changes):
 *   <name>            symlink → .versions/<name>@<hash16>   (swapped atomically by rename)
 *   .versions/<name>@<hash16>/SKILL.md, …                 (complete before it is linked)
 * A skill is rewritten only when its content hash changes; the symlink's
 * target records which version is on disk, so "nothing changed" costs one
 * query, one readdir and one readlink per skill. Writers on any host take a
 * Postgres advisory lock per agent, so two processes never interleave.
 */
import { randomBytes } from 'node:crypto';
import { access, chmod, mkdir, readdir, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Knex } from 'knex';
import type { Db } from '../../core/db/knex.js';
import type { DbSkill } from '../../core/db/tables/index.js';
import { SkillsRepository } from '../../core/repositories/skills.repository.js';

export interface SkillSummary {
  name: string;
  description: string;
}

const VERSIONS = '.versions';
const DIR_MODE = 0o755; // the sandbox user (not the worker's) reads these
const MAX_ATTEMPTS = 5;

const versionName = (s: Pick<DbSkill, 'name' | 'content_hash'>) => `${s.name}@${s.content_hash.slice(0, 16)}`;
const linkTarget = (s: Pick<DbSkill, 'name' | 'content_hash'>) => `${VERSIONS}/${versionName(s)}`;
const tmpName = (prefix: string) => `.${prefix}-${randomBytes(6).toString('hex')}`;

/** The agent's skills, by name. */
export async function agentSkills(db: Db, agentId: string): Promise<SkillSummary[]> {
  const rows = await new SkillsRepository(db).all(agentId);
  return rows.map((r) => ({ name: r.name, description: r.description }));
}

async function mkdirMode(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await chmod(dir, DIR_MODE); // mkdir's mode is filtered by the umask
}

async function readlinkOrUndefined(p: string): Promise<string | undefined> {
  try {
    return await readlink(p);
  } catch {
    return undefined;
  }
}

const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

/** True when the folder shows exactly these skills at these versions. */
async function inSync(dir: string, skills: DbSkill[]): Promise<boolean> {
  const entries = (await readdir(dir)).filter((e) => !e.startsWith('.'));
  if (entries.length !== skills.length) return false;
  for (const s of skills) {
    if ((await readlinkOrUndefined(path.join(dir, s.name))) !== linkTarget(s)) return false;
  }
  return Promise.all(skills.map((s) => exists(path.join(dir, linkTarget(s))))).then((all) =>
    all.every(Boolean),
  );
}

/** Writes one skill version to a temp folder and moves it into place; false when the skill changed meanwhile. */
async function writeVersion(
  repo: SkillsRepository,
  trx: Knex.Transaction,
  dir: string,
  skill: DbSkill,
): Promise<boolean> {
  const final = path.join(dir, linkTarget(skill));
  if (await exists(final)) return true;
  const files = await repo.files(skill.id, skill.content_hash, trx);
  if (files.length === 0) return false;
  const tmp = path.join(dir, VERSIONS, tmpName('tmp'));
  await mkdirMode(tmp);
  try {
    for (const f of files) {
      const target = path.join(tmp, f.path);
      // Paths were validated on upload; check again, since this writes to the host.
      if (!target.startsWith(tmp + path.sep))
        throw new Error(`skill file path escapes its folder: ${f.path}`);
      await mkdirMode(path.dirname(target));
      const mode = f.executable ? 0o755 : 0o644;
      await writeFile(target, f.content, { mode });
      await chmod(target, mode);
    }
    await rename(tmp, final);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return true;
}

/** Points `<dir>/<name>` at the skill's version by renaming a fresh symlink over it (atomic). */
async function link(dir: string, skill: DbSkill): Promise<void> {
  const at = path.join(dir, skill.name);
  if ((await readlinkOrUndefined(at)) === linkTarget(skill)) return;
  const tmp = path.join(dir, tmpName('link'));
  await symlink(linkTarget(skill), tmp);
  try {
    await rename(tmp, at);
  } catch (err) {
    // Something that is not a symlink sits there (never written by us): replace it.
    await rm(at, { recursive: true, force: true });
    await rename(tmp, at).catch(async () => {
      await rm(tmp, { force: true });
      throw err;
    });
  }
}

/** Under the lock: brings the folder to the database's state. False when a skill changed mid-way (retry). */
async function reconcile(
  repo: SkillsRepository,
  trx: Knex.Transaction,
  agentId: string,
  dir: string,
): Promise<boolean> {
  const skills = await repo.all(agentId, trx);
  for (const s of skills) {
    if (!(await writeVersion(repo, trx, dir, s))) return false;
    await link(dir, s);
  }
  const names = new Set(skills.map((s) => s.name));
  for (const entry of await readdir(dir)) {
    if (entry === VERSIONS || names.has(entry)) continue;
    await rm(path.join(dir, entry), { recursive: true, force: true }); // deleted skills, stale temp links
  }
  const versions = new Set(skills.map(versionName));
  for (const entry of await readdir(path.join(dir, VERSIONS))) {
    if (!versions.has(entry)) await rm(path.join(dir, VERSIONS, entry), { recursive: true, force: true });
  }
  return true;
}

/**
 * Writes the agent's skills under `root` as <root>/<agentId>/<name>/..., removes
 * skills that were deleted, and returns the agent's folder (created even when
 * the agent has no skills, so it can be mounted before the first upload).
 */
export async function materializeSkills(db: Db, agentId: string, root: string): Promise<string> {
  if (!/^[0-9a-f-]{36}$/i.test(agentId)) throw new Error(`not an agent id: ${agentId}`);
  const repo = new SkillsRepository(db);
  const dir = path.join(path.resolve(root), agentId);
  await mkdirMode(path.resolve(root));
  await mkdirMode(path.join(dir, VERSIONS));
  if (await inSync(dir, await repo.all(agentId))) return dir;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const done = await repo.withMaterializeLock(agentId, (trx) => reconcile(repo, trx, agentId, dir));
    if (done) return dir;
  }
  throw new Error(`skills of agent ${agentId} kept changing while being written; try again`);
}

/** One line per skill: descriptions may hold newlines, the prompt list must not. */
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

/**
 * The text appended to the system prompt: each skill's name, description and
 * path, and when to read it. Empty string for no skills.
 */
export function skillsPromptSection(skills: SkillSummary[]): string {
  if (skills.length === 0) return '';
  const lines = skills.map(
    (s) => `- ${s.name}: ${oneLine(s.description)} (read /sandbox/skills/${s.name}/SKILL.md)`,
  );
  return [
    '## Skills',
    '',
    'You have skills: folders of instructions, scripts and reference files for specific tasks, stored read-only in your sandbox under /sandbox/skills/. ' +
      "When a task matches a skill's description, first read its SKILL.md with the execute_bash_commands tool " +
      '(for example `cat /sandbox/skills/<name>/SKILL.md`) and follow it; it may point to other files in the same folder. ' +
      'Do not read skills that are not relevant to the task.',
    '',
    ...lines,
  ].join('\n');
}
