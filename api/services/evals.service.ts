import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { DbEval, DbEvalResult, EvalVariant } from '../../core/db/tables/evals.js';
import { ServiceUnavailableError, ValidationError } from '../../core/errors.js';
import { evalView, type EvalView } from '../../core/evals/eval-view.js';
import { AgentsRepository } from '../../core/repositories/agents.repository.js';
import { DatasetsRepository } from '../../core/repositories/datasets.repository.js';
import { EvalsRepository } from '../../core/repositories/evals.repository.js';
import { PromptsRepository } from '../../core/repositories/prompts.repository.js';
import { RunsRepository } from '../../core/repositories/runs.repository.js';
import {
  EVAL_WORKFLOW_TYPE,
  evalWorkflowId,
  scratchConversationId,
  type EvalInput,
} from '../../workflows/eval.definitions.js';
import type { AppDeps } from '../deps.js';
import type { Page } from '../schemas/common.schemas.js';
import type { EvalCreateBody, EvalResultView, EvalVariantBody } from '../schemas/evals.schemas.js';
import { assertInProject, requireProject } from './project-scope.js';

/** How often a replayed turn's activity reads its run when no notification of its end came (a lost one). */
const TURN_POLL_MS = 250;

const invalid = (field: string, message: string) => ValidationError.field(field, message, 'any.reference');

function toResult(evalId: string, variants: EvalVariant[], r: DbEvalResult): EvalResultView {
  return {
    variant: variants[r.variant_index]?.name ?? String(r.variant_index),
    case_index: r.case_index,
    turn_index: r.turn_index,
    case_key: r.case_key,
    status: r.status,
    input: r.input,
    expected: r.expected,
    original: r.original,
    run_id: r.run_id,
    conversation_id: scratchConversationId(evalId, r.case_index, r.variant_index),
    output: r.output,
    structured: r.structured ?? null,
    input_tokens: r.input_tokens,
    output_tokens: r.output_tokens,
    cost_usd: r.cost_usd === null ? null : Number(r.cost_usd),
    latency_ms: r.latency_ms,
    exact_match: r.exact_match,
    schema_valid: r.schema_valid,
    judge_score: r.judge_score,
    judge_reason: r.judge_reason,
    error: r.error,
  };
}

/**
 * Evals: a change replayed over recorded conversations or a dataset, by an
 * eval workflow (workflows/eval.workflow.ts). Creating one checks every id
 * it names against the project (a 400 naming the field), stores it queued
 * and starts its workflow.
 */
export class EvalsService {
  private readonly evals: EvalsRepository;

  constructor(private readonly deps: AppDeps) {
    this.evals = new EvalsRepository(deps.db);
  }

  async create(projectId: string, body: EvalCreateBody): Promise<EvalView> {
    await requireProject(this.deps.db, projectId);
    const agent = await new AgentsRepository(this.deps.db).findById(body.agent_id);
    if (!agent || agent.project_id !== projectId)
      throw invalid('agent_id', 'agent_id does not name an agent of this project');
    await this.checkSource(projectId, body);
    const variants = await this.resolveVariants(projectId, agent.prompt_id, body.variants);
    if (body.judge) await this.checkJudge(projectId, body.judge);
    const id = randomUUID();
    const row = await this.evals.insert({
      id,
      project_id: projectId,
      agent_id: agent.id,
      conversation_ids: body.conversation_ids ? JSON.stringify(body.conversation_ids) : null,
      dataset_id: body.dataset_id ?? null,
      variants: JSON.stringify(variants),
      concurrency: body.concurrency,
      judge: body.judge ? JSON.stringify(body.judge) : null,
      thresholds: body.thresholds ? JSON.stringify(body.thresholds) : null,
      execute_diverged_tools: body.execute_diverged_tools,
      workflow_id: evalWorkflowId(id),
    });
    await this.startWorkflow(row);
    return evalView(row, []);
  }

  private async startWorkflow(row: DbEval): Promise<void> {
    const { config, temporal, logger } = this.deps;
    const input: EvalInput = {
      evalId: row.id,
      pollMs: TURN_POLL_MS,
      heartbeatTimeoutMs: config.session.toolHeartbeatTimeoutMs,
    };
    try {
      await temporal.client.workflow.start(EVAL_WORKFLOW_TYPE, {
        workflowId: row.workflow_id,
        taskQueue: config.temporalTaskQueue,
        args: [input],
      });
    } catch (err) {
      logger.error({ err, evalId: row.id }, 'could not start an eval workflow');
      await this.evals.finish(row.id, 'failed', {
        code: 'temporal_unavailable',
        message: 'the eval workflow could not be started',
      });
      throw new ServiceUnavailableError({ temporal: 'the eval workflow could not be started; try again' });
    }
  }

  /** Every conversation must be one of the project's in which the agent spoke; a dataset must have rows. */
  private async checkSource(projectId: string, body: EvalCreateBody): Promise<void> {
    if (body.conversation_ids) {
      const found = await this.evals.conversationsWithAgent(projectId, body.agent_id, body.conversation_ids);
      const unknown = body.conversation_ids.filter((id) => !found.has(id));
      if (unknown.length)
        throw invalid(
          'conversation_ids',
          `no conversation of this project in which the agent spoke: ${unknown.slice(0, 10).join(', ')}`,
        );
      return;
    }
    const dataset = await new DatasetsRepository(this.deps.db).findById(body.dataset_id!);
    if (!dataset || dataset.project_id !== projectId)
      throw invalid('dataset_id', 'dataset_id does not name a dataset of this project');
    if (dataset.row_count === 0)
      throw ValidationError.field('dataset_id', 'the dataset has no rows', 'array.min');
  }

  /** Each variant's model (of the project, with a provider) and prompt version (of the agent's prompt). */
  private async resolveVariants(
    projectId: string,
    promptId: string,
    variants: EvalVariantBody[],
  ): Promise<EvalVariant[]> {
    const prompts = new PromptsRepository(this.deps.db);
    const runs = new RunsRepository(this.deps.db);
    const out: EvalVariant[] = [];
    for (const [i, v] of variants.entries()) {
      const field = `variants.${i}`;
      if (v.model_id) {
        const { model } = await runs.overrideTargets(projectId, {
          modelId: v.model_id,
          promptVersionId: undefined,
        });
        if (!model)
          throw invalid(`${field}.model_id`, `${field}.model_id does not name a model of this project`);
        if (!model.provider_id)
          throw invalid(
            `${field}.model_id`,
            `${field}.model_id names model "${model.name}", which has no provider to call`,
          );
      }
      let version: { id: string; version: number } | undefined;
      if (v.prompt_version !== undefined) {
        version = await prompts.findVersion(promptId, v.prompt_version);
        if (!version)
          throw invalid(`${field}.prompt_version`, `the agent's prompt has no version ${v.prompt_version}`);
      } else if (v.prompt_label !== undefined) {
        version = await prompts.versionByLabel(promptId, v.prompt_label);
        if (!version)
          throw invalid(`${field}.prompt_label`, `the agent's prompt has no label "${v.prompt_label}"`);
      }
      out.push({
        name: v.name,
        prompt_version_id: version?.id ?? null,
        prompt_version: version?.version ?? null,
        prompt_label: v.prompt_label ?? null,
        model_id: v.model_id ?? null,
        parameters: v.parameters ?? null,
      });
    }
    return out;
  }

  private async checkJudge(projectId: string, judge: { model_id: string; prompt_id: string }): Promise<void> {
    const { model } = await new RunsRepository(this.deps.db).overrideTargets(projectId, {
      modelId: judge.model_id,
      promptVersionId: undefined,
    });
    if (!model?.provider_id)
      throw invalid('judge.model_id', 'judge.model_id does not name a model of this project with a provider');
    if (!(await this.evals.promptInProject(projectId, judge.prompt_id)))
      throw invalid(
        'judge.prompt_id',
        'judge.prompt_id does not name a prompt of this project with a version',
      );
  }

  async list(projectId: string, page: Page): Promise<EvalView[]> {
    await requireProject(this.deps.db, projectId);
    const rows = await this.evals.list(projectId, page);
    return Promise.all(rows.map(async (r) => evalView(r, await this.evals.results(r.id))));
  }

  private async find(id: string, projectId: string | undefined): Promise<DbEval> {
    const row = await this.evals.findById(id);
    assertInProject(row, projectId, 'eval');
    return row!;
  }

  async get(id: string, projectId: string | undefined): Promise<EvalView> {
    const row = await this.find(id, projectId);
    return evalView(row, await this.evals.results(id));
  }

  async results(id: string, projectId: string | undefined): Promise<EvalResultView[]> {
    const row = await this.find(id, projectId);
    return (await this.evals.results(id)).map((r) => toResult(id, row.variants, r));
  }

  /**
   * Cancels: the eval is `cancelled` at once (an ended one is left as it is)
   * and its workflow is cancelled, which stops the replays under way; the
   * workflow then sends `eval.completed`.
   */
  async cancel(id: string, projectId: string | undefined): Promise<EvalView> {
    const row = await this.find(id, projectId);
    if (await this.evals.finish(id, 'cancelled', null)) {
      try {
        await this.deps.temporal.client.workflow.getHandle(row.workflow_id).cancel();
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) {
          this.deps.logger.error({ err, evalId: id }, 'could not cancel an eval workflow');
          throw new ServiceUnavailableError({
            temporal: 'the eval workflow could not be reached; try again',
          });
        }
      }
    }
    return this.get(id, projectId);
  }
}
