import { ConflictError, NotFoundError, ValidationError, isUniqueViolation } from '../../core/errors.js';
import type { Knex } from 'knex';
import type { DbPrompt, DbPromptLabelMove, DbPromptVersion } from '../../core/db/tables/index.js';
import type {
  DbPromptSummary,
  DbVersionWithLabels,
  PromptsRepository,
} from '../../core/repositories/prompts.repository.js';
import type { Page } from '../schemas/common.schemas.js';
import type {
  LabelMove,
  Prompt,
  PromptCreateBody,
  PromptLabel,
  PromptVersion,
  VersionCreateBody,
  VersionUpdateBody,
} from '../schemas/prompts.schemas.js';
import { pickUnique } from './name-lookup.js';
import { requireProject } from './project-scope.js';
import { TemplateSyntaxError, validateTemplate } from '../../core/prompts/prompt-template.js';

function toPrompt(row: DbPromptSummary): Prompt {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    latest_version: row.latest_version,
    labels: { production: row.production_version, latest: row.latest_version },
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function toVersion(prompt: DbPrompt, row: DbVersionWithLabels): PromptVersion {
  return {
    id: row.id,
    prompt_id: row.prompt_id,
    name: prompt.name,
    version: row.version,
    template: row.template,
    // A version shows one `label` (docs/interface.md#prompts): production when it holds both.
    label: row.labels.includes('production') ? 'production' : row.labels.includes('latest') ? 'latest' : null,
    labels: row.labels,
    variables: variablesOf(row.template),
    commit_message: row.commit_message,
    created_at: row.created_at.toISOString(),
  };
}

function toLabelMove(row: DbPromptLabelMove): LabelMove {
  return {
    label: row.label,
    from_version: row.from_version,
    to_version: row.to_version,
    moved_by: row.moved_by,
    moved_at: row.moved_at.toISOString(),
  };
}

/** Rows written around the API (imports, older releases) must not turn a read into a 500. */
function variablesOf(template: string): string[] {
  try {
    return validateTemplate(template);
  } catch {
    return [];
  }
}

/** A bad template is the client's 400, named `template`, with the parser's reason. */
function checkTemplate(template: string): void {
  try {
    validateTemplate(template);
  } catch (err) {
    if (err instanceof TemplateSyntaxError)
      throw ValidationError.field('template', err.message, 'template.syntax');
    throw err;
  }
}

const isForeignKeyViolation = (err: unknown) => (err as { code?: string }).code === '23503';

/**
 * Prompts with immutable versions and two labels: `latest` follows the newest
 * version by itself, `production` moves only when assigned. Every write that
 * numbers versions or moves labels holds the prompt row's lock, so concurrent
 * writers line up instead of colliding. Each assignment that moves a label is
 * kept in the prompt's label history with who moved it (`movedBy`, the
 * credential's name); `latest` following a new version is not a move anyone
 * made, and the versions list already tells it.
 */
export class PromptsService {
  constructor(private readonly prompts: PromptsRepository) {}

  async create(projectId: string, body: PromptCreateBody, movedBy: string): Promise<Prompt> {
    await requireProject(this.prompts.db, projectId);
    checkTemplate(body.template);
    try {
      const id = await this.prompts.transaction(async (trx) => {
        const prompt = await this.prompts.insertPrompt(trx, { project_id: projectId, name: body.name });
        const v1 = await this.prompts.insertVersion(trx, {
          prompt_id: prompt.id,
          version: 1,
          template: body.template,
          commit_message: body.commit_message,
        });
        await this.prompts.setLabel(trx, prompt.id, 'latest', v1.id);
        if (body.label === 'production') await this.moveLabel(trx, prompt, 'production', v1, movedBy);
        return prompt.id;
      });
      return toPrompt(await this.prompts.summary(id));
    } catch (err) {
      if (isUniqueViolation(err))
        throw new ConflictError({
          field: 'name',
          reason: 'a prompt with this name already exists in the project',
        });
      throw err;
    }
  }

  async list(projectId: string, page: Page): Promise<Prompt[]> {
    await requireProject(this.prompts.db, projectId);
    return (await this.prompts.list(projectId, page)).map(toPrompt);
  }

  async getByName(name: string, projectId: string | undefined): Promise<Prompt> {
    const prompt = await this.resolve(name, projectId);
    return toPrompt(await this.prompts.summary(prompt.id));
  }

  async addVersion(
    name: string,
    projectId: string | undefined,
    body: VersionCreateBody,
    movedBy: string,
  ): Promise<PromptVersion> {
    const found = await this.resolve(name, projectId);
    checkTemplate(body.template);
    return this.prompts.transaction(async (trx) => {
      const prompt = await this.prompts.lock(trx, found.id);
      if (!prompt) throw new NotFoundError('prompt'); // deleted since we resolved it
      const version = (await this.prompts.maxVersion(trx, prompt.id)) + 1;
      const row = await this.prompts.insertVersion(trx, {
        prompt_id: prompt.id,
        version,
        template: body.template,
        commit_message: body.commit_message,
      });
      await this.prompts.setLabel(trx, prompt.id, 'latest', row.id);
      if (body.label === 'production') await this.moveLabel(trx, prompt, 'production', row, movedBy);
      await this.prompts.touch(trx, prompt.id);
      return toVersion(prompt, (await this.prompts.findVersion(prompt.id, version, trx))!);
    });
  }

  async listVersions(name: string, projectId: string | undefined, page: Page): Promise<PromptVersion[]> {
    const prompt = await this.resolve(name, projectId);
    return (await this.prompts.listVersions(prompt.id, page)).map((v) => toVersion(prompt, v));
  }

  async getVersion(name: string, projectId: string | undefined, version: number): Promise<PromptVersion> {
    const prompt = await this.resolve(name, projectId);
    const row = await this.prompts.findVersion(prompt.id, version);
    if (!row) throw new NotFoundError('prompt version');
    return toVersion(prompt, row);
  }

  /** Moves a label onto a version. Versions themselves never change. */
  async setLabel(
    name: string,
    projectId: string | undefined,
    version: number,
    body: VersionUpdateBody,
    movedBy: string,
  ): Promise<PromptVersion> {
    const found = await this.resolve(name, projectId);
    return this.prompts.transaction(async (trx) => {
      const prompt = await this.prompts.lock(trx, found.id);
      if (!prompt) throw new NotFoundError('prompt');
      const row = await this.prompts.findVersion(prompt.id, version, trx);
      if (!row) throw new NotFoundError('prompt version');
      const label: PromptLabel = body.label;
      if (label === 'latest') {
        const newest = await this.prompts.maxVersion(trx, prompt.id);
        // Assigning latest to the newest version is a harmless no-op; anywhere else it would lie.
        if (version !== newest) {
          throw ValidationError.field(
            'label',
            `latest always sits on the newest version (${newest}) and moves there by itself`,
            'any.invalid',
          );
        }
        return toVersion(prompt, row);
      }
      await this.moveLabel(trx, prompt, label, row, movedBy);
      await this.prompts.touch(trx, prompt.id);
      return toVersion(prompt, (await this.prompts.findVersion(prompt.id, version, trx))!);
    });
  }

  /** Who moved the prompt's labels, when, from which version to which; newest first. */
  async labelHistory(name: string, projectId: string | undefined, page: Page): Promise<LabelMove[]> {
    const prompt = await this.resolve(name, projectId);
    return (await this.prompts.labelMoves(prompt.id, page)).map(toLabelMove);
  }

  /**
   * Puts `label` on `to` and records the move, under the prompt's lock
   * (`trx`). A label already there stays put and records nothing.
   */
  private async moveLabel(
    trx: Knex.Transaction,
    prompt: DbPrompt,
    label: PromptLabel,
    to: Pick<DbPromptVersion, 'id' | 'version'>,
    movedBy: string,
  ): Promise<void> {
    const from = await this.prompts.labelledVersion(trx, prompt.id, label);
    if (from === to.version) return;
    await this.prompts.setLabel(trx, prompt.id, label, to.id);
    await this.prompts.recordLabelMove(trx, {
      project_id: prompt.project_id,
      prompt_id: prompt.id,
      label,
      from_version: from,
      to_version: to.version,
      moved_by: movedBy,
    });
  }

  /** Refused (409, naming the agents) while an agent uses the prompt; never cascades to agents. */
  async delete(name: string, projectId: string | undefined): Promise<void> {
    const found = await this.resolve(name, projectId);
    try {
      await this.prompts.transaction(async (trx) => {
        // The lock conflicts with the key-share lock an agent insert takes on the prompt, so the check below stays true.
        if (!(await this.prompts.lock(trx, found.id))) throw new NotFoundError('prompt');
        const agents = await this.prompts.referencingAgents(trx, found.id);
        if (agents.length > 0) {
          throw new ConflictError({
            reason: 'still referenced',
            referenced_by: agents.map((a) => ({ type: 'agent', id: a.id, name: a.name })),
          });
        }
        await this.prompts.deletePrompt(trx, found.id);
      });
    } catch (err) {
      if (isForeignKeyViolation(err)) {
        const agents = await this.prompts.referencingAgents(this.prompts.db, found.id);
        throw new ConflictError({
          reason: 'still referenced',
          referenced_by: agents.map((a) => ({ type: 'agent', id: a.id, name: a.name })),
        });
      }
      throw err;
    }
  }

  private async resolve(name: string, projectId: string | undefined): Promise<DbPrompt> {
    if (projectId !== undefined) await requireProject(this.prompts.db, projectId);
    return pickUnique(await this.prompts.findByName(name, projectId), 'prompt');
  }
}
