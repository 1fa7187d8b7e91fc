import { NotFoundError, ValidationError, type FieldError } from '../../core/errors.js';
import type { DbSkill } from '../../core/db/tables/index.js';
import {
  SkillsRepository,
  type DbSkillFileMeta,
  type SkillOwner,
} from '../../core/repositories/skills.repository.js';
import type { Page } from '../schemas/common.schemas.js';
import type { SkillFileValue } from '../schemas/skills.schemas.js';
import type { Db } from '../../core/db/knex.js';
import { readSkillArchive } from './skill-archive.js';
import { SKILL_LIMITS, SKILL_MD, checkSkill, encodeContent, type SkillFile } from './skill-files.js';
import { assertInProject } from './project-scope.js';

export interface SkillSummaryView {
  name: string;
  description: string;
  path: string;
  file_count: number;
  total_bytes: number;
  content_hash: string;
  warnings: string[];
  created_at: string;
  updated_at: string;
}

export interface SkillFileView {
  path: string;
  size: number;
  executable: boolean;
  encoding?: 'utf-8' | 'base64';
  content?: string;
}

export interface SkillDetailView extends SkillSummaryView {
  skill_md: string;
  files: SkillFileView[];
}

/** An upload: the zip bytes, or the JSON `files` map. */
export type SkillUpload = { zip: Buffer } | { files: Record<string, SkillFileValue> | undefined };

export const skillSandboxPath = (name: string) => `/sandbox/skills/${name}/${SKILL_MD}`;

/** JSON `files` → files; content that does not decode is named per path. */
function filesFromJson(map: Record<string, SkillFileValue> | undefined): SkillFile[] {
  if (map === undefined || Object.keys(map).length === 0)
    throw ValidationError.field(
      'files',
      'send the skill as JSON {"files": {"SKILL.md": "...", ...}} or as a zip (Content-Type: application/zip)',
      'any.required',
    );
  const problems: FieldError[] = [];
  const files = Object.entries(map).map(([path, value]) => {
    const v = typeof value === 'string' ? { content: value, encoding: 'utf-8', executable: false } : value;
    if (v.encoding === 'base64' && !/^[A-Za-z0-9+/]*={0,2}$/.test(v.content.replace(/\s+/g, '')))
      problems.push({
        field: `files.${path}`,
        message: 'content is not valid base64',
        type: 'string.base64',
      });
    const content = Buffer.from(v.content, v.encoding === 'base64' ? 'base64' : 'utf8');
    return { path, content, executable: v.executable ?? false };
  });
  if (problems.length > 0) throw new ValidationError(problems);
  return files;
}

export class SkillsService {
  private readonly repo: SkillsRepository;

  constructor(
    db: Db,
    private readonly opts: { sandboxEnabled: boolean },
  ) {
    this.repo = new SkillsRepository(db);
  }

  /** Skills are read through the sandbox: say so when this agent will not have one. */
  private warnings(owner: SkillOwner): string[] {
    if (!owner.sandbox.enabled)
      return [
        'the agent has sandbox.enabled false: skills are stored but not offered to the model (they are read through execute_bash_commands)',
      ];
    if (!this.opts.sandboxEnabled)
      return [
        'this server has no sandbox backend (SANDBOX_ENABLED is unset): skills are stored but not offered to the model',
      ];
    return [];
  }

  private async owner(agentId: string, projectId?: string): Promise<SkillOwner> {
    const owner = await this.repo.owner(agentId);
    assertInProject(owner, projectId, 'agent');
    return owner!;
  }

  private summary(row: DbSkill, owner: SkillOwner): SkillSummaryView {
    return {
      name: row.name,
      description: row.description,
      path: skillSandboxPath(row.name),
      file_count: row.file_count,
      total_bytes: row.total_bytes,
      content_hash: row.content_hash,
      warnings: this.warnings(owner),
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    };
  }

  private async detail(row: DbSkill, owner: SkillOwner, withContent: boolean): Promise<SkillDetailView> {
    const meta: DbSkillFileMeta[] = withContent
      ? await this.repo.files(row.id)
      : await this.repo.fileMeta(row.id);
    const skillMd = withContent
      ? (meta as Array<DbSkillFileMeta & { content: Buffer }>).find((f) => f.path === SKILL_MD)?.content
      : await this.repo.fileContent(row.id, SKILL_MD);
    return {
      ...this.summary(row, owner),
      skill_md: skillMd?.toString('utf8') ?? '',
      files: meta.map((f) => ({
        path: f.path,
        size: f.size,
        executable: f.executable,
        ...(withContent ? encodeContent((f as DbSkillFileMeta & { content: Buffer }).content) : {}),
      })),
    };
  }

  /** Creates or replaces the skill; an identical upload changes nothing (not even updated_at). */
  async put(
    agentId: string,
    projectId: string | undefined,
    name: string,
    upload: SkillUpload,
  ): Promise<SkillDetailView & { created: boolean }> {
    await this.owner(agentId, projectId); // 404 before reading anything
    const files = 'zip' in upload ? await readSkillArchive(upload.zip) : filesFromJson(upload.files);
    const checked = checkSkill(files, name);
    if (Array.isArray(checked)) throw new ValidationError(checked);

    const { skill, created, owner } = await this.repo.transaction(async (trx) => {
      // The agent row lock serializes this agent's skill writes: the per-agent cap holds under concurrency.
      const owner = await this.repo.owner(agentId, trx, true);
      if (!owner) throw new NotFoundError('agent');
      const existing = await this.repo.find(agentId, name, trx);
      if (existing?.content_hash === checked.contentHash) return { skill: existing, created: false, owner };
      if (!existing && (await this.repo.count(agentId, trx)) >= SKILL_LIMITS.skillsPerAgent)
        throw ValidationError.field(
          'name',
          `an agent has at most ${SKILL_LIMITS.skillsPerAgent} skills; delete one first`,
          'skill.too_many_skills',
        );
      const result = await this.repo.upsert(trx, {
        agent_id: agentId,
        name,
        description: checked.description,
        file_count: checked.files.length,
        total_bytes: checked.totalBytes,
        content_hash: checked.contentHash,
      });
      await this.repo.replaceFiles(
        trx,
        result.skill.id,
        checked.files.map((f) => ({
          path: f.path,
          content: f.content,
          size: f.content.length,
          executable: f.executable,
        })),
      );
      return { ...result, owner };
    });
    return { ...(await this.detail(skill, owner, false)), created };
  }

  async list(agentId: string, projectId: string | undefined, page: Page): Promise<SkillSummaryView[]> {
    const owner = await this.owner(agentId, projectId);
    return (await this.repo.list(agentId, page)).map((r) => this.summary(r, owner));
  }

  async get(
    agentId: string,
    projectId: string | undefined,
    name: string,
    includeFiles: boolean,
  ): Promise<SkillDetailView> {
    const owner = await this.owner(agentId, projectId);
    const row = await this.repo.find(agentId, name);
    if (!row) throw new NotFoundError('skill');
    return this.detail(row, owner, includeFiles);
  }

  async delete(agentId: string, projectId: string | undefined, name: string): Promise<void> {
    await this.owner(agentId, projectId);
    if (!(await this.repo.delete(agentId, name))) throw new NotFoundError('skill');
  }
}
