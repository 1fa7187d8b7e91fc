/**
 * The eval workflows' activities: planning the cases, replaying a case turn
 * by turn (each written once per eval, variant, case and turn, so a retried
 * or resumed eval never runs a finished turn again), the judge, the turns left
 * after a divergence, and the end (verdict and the `eval.completed` webhook).
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { exactMatch } from '../../core/evals/compare.js';
import { evalView } from '../../core/evals/eval-view.js';
import { EVAL_TERMINAL, type DbEval, type DbEvalResult } from '../../core/db/tables/evals.js';
import type { DbRun } from '../../core/db/tables/index.js';
import { EvalsRepository } from '../../core/repositories/evals.repository.js';
import {
  scratchConversationId,
  type EvalCaseInput,
  type EvalPlan,
  type EvalTurnArgs,
  type EvalTurnOutcome,
} from '../../workflows/eval.definitions.js';
import { messageText } from '../session/context.js';
import { heartbeating } from '../session/turn-run.js';
import type { SessionDeps, TurnPlan } from '../session/types.js';
import { emitProjectWebhooks } from '../webhooks/run-webhooks.js';
import { agentOf, planCases, turnSource, type TurnSource } from './eval-cases.js';
import { judge } from './judge.js';
import { RunEndNotices } from './run-end-notices.js';
import { replayTurn } from './session-turn.js';

export interface EvalDeps extends SessionDeps {
  temporal?: Client;
}

/** The run's outcome as the eval counts it. */
function outcomeOf(run: DbRun): EvalTurnOutcome['status'] {
  if (run.status === 'completed') return 'completed';
  return run.error?.code === 'replay_diverged' ? 'diverged' : 'failed';
}

/** Checked against the agent's output schema: only when the turn ran with one. */
function schemaValid(run: DbRun): boolean | null {
  const plan = run.plan as unknown as TurnPlan | null;
  if (!plan?.schema) return null;
  if (run.status === 'completed') return run.output?.structured !== undefined;
  return run.error?.code === 'schema_validation_failed' ? false : null;
}

const latencyOf = (run: DbRun) =>
  run.started_at && run.finished_at ? run.finished_at.getTime() - run.started_at.getTime() : null;

const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v));

/** The turn's result row: the variant's answer and figures beside the source's, and the comparisons. */
function resultOf(source: TurnSource, run: DbRun) {
  const status = outcomeOf(run);
  const output = run.output?.content ?? null;
  return {
    case_key: source.key,
    status,
    input: json(source.input),
    expected: json(source.expected),
    original: json(source.original),
    run_id: run.id,
    output,
    structured: json(run.output?.structured),
    input_tokens: run.usage?.input_tokens ?? 0,
    output_tokens: run.usage?.output_tokens ?? 0,
    cost_usd: run.usage?.cost_usd ?? null,
    latency_ms: latencyOf(run),
    exact_match: status === 'completed' ? exactMatch(output, source.expected) : false,
    schema_valid: schemaValid(run),
    error: json(run.error ? { code: run.error.code, message: run.error.message } : null),
  };
}

export function createEvalActivities(deps: EvalDeps) {
  const repo = new EvalsRepository(deps.db);

  const notices = new RunEndNotices(deps.config.databaseUrl, deps.config.database.ssl, deps.logger);
  /** Agents' names (the session workflow's memo), read once per worker: a rename shows in later evals' sessions only. */
  const agentNames = new Map<string, string>();

  async function loadEval(evalId: string): Promise<DbEval | undefined> {
    return repo.findById(evalId);
  }

  /** The steps of a case's turns; the case's activity runs them in order. */
  const steps = {
    /**
     * One user turn of a case against a variant, in the case's scratch
     * conversation. A turn already written answers from its row; an eval that
     * has ended (cancelled) runs nothing more.
     */
    async replayEvalTurn(
      args: EvalTurnArgs,
      prepared: Set<string>,
    ): Promise<EvalTurnOutcome & { judge: boolean }> {
      const key = {
        variant_index: args.variantIndex,
        case_index: args.caseIndex,
        turn_index: args.turnIndex,
      };
      const [ev, done] = await Promise.all([loadEval(args.evalId), repo.findResult(args.evalId, key)]);
      if (done) return { status: done.status, judge: Boolean(ev?.judge) && done.status === 'completed' };
      if (!ev || EVAL_TERMINAL.has(ev.status) || !ev.plan) return { status: 'skipped', judge: false };
      if (!deps.temporal) throw new Error('evals need the worker’s Temporal client');
      const c = ev.plan[args.caseIndex]!;
      const variant = ev.variants[args.variantIndex]!;
      const [source, agentName] = await Promise.all([
        turnSource(repo, ev, c, args.turnIndex),
        agentNames.get(agentOf(ev)) ?? repo.agentName(agentOf(ev)),
      ]);
      agentNames.set(agentOf(ev), agentName ?? '');
      if (typeof source === 'string') {
        const error = { code: 'source_missing', message: source };
        await repo.insertResult({
          eval_id: ev.id,
          ...key,
          case_key: c.key,
          status: 'failed',
          error: json(error),
        });
        return { status: 'failed', judge: false };
      }
      const conversationId = scratchConversationId(ev.id, args.caseIndex, args.variantIndex);
      // Once per case and attempt: the conversation must carry the eval's mark before its first run.
      if (!prepared.has(conversationId)) {
        await repo.ensureScratchConversation(ev.project_id, conversationId, ev.id, source.context);
        prepared.add(conversationId);
      }
      const overrides = {
        ...(variant.prompt_version_id ? { prompt_version_id: variant.prompt_version_id } : {}),
        ...(variant.model_id ? { model_id: variant.model_id } : {}),
        ...(variant.parameters ? { parameters: variant.parameters } : {}),
      };
      const run = await replayTurn(
        { config: deps.config, db: deps.db, temporal: deps.temporal, notices },
        {
          projectId: ev.project_id,
          agentId: agentOf(ev),
          agentName: agentName ?? '',
          conversationId,
          messageId: `turn-${args.turnIndex}`,
          input: source.input,
          context: source.context,
          overrides: Object.keys(overrides).length ? overrides : undefined,
          replay: {
            eval_id: ev.id,
            source_run_id: source.sourceRunId,
            execute_diverged_tools: ev.execute_diverged_tools,
          },
        },
        args.pollMs,
      );
      const status = outcomeOf(run);
      await repo.insertResult({ eval_id: ev.id, ...key, ...resultOf(source, run) });
      return { status, judge: Boolean(ev.judge) && status === 'completed' };
    },

    /** The judge's score of a completed turn, once (a scored row is left as it is). */
    async judgeEvalTurn(args: EvalTurnArgs): Promise<void> {
      const ev = await loadEval(args.evalId);
      const key = {
        variant_index: args.variantIndex,
        case_index: args.caseIndex,
        turn_index: args.turnIndex,
      };
      const row: DbEvalResult | undefined = await repo.findResult(args.evalId, key);
      if (!ev?.judge || !row?.run_id || row.judge_reason !== null || EVAL_TERMINAL.has(ev.status)) return;
      const plan = await repo.runPlan<TurnPlan>(row.run_id);
      if (!plan) return;
      const reference =
        typeof row.expected === 'string' ? row.expected : JSON.stringify(row.expected ?? null);
      const verdict = await judge(deps, plan, ev.judge, {
        input: messageText(row.input),
        reference,
        answer: row.output ?? '',
      });
      await repo.setJudgement(row.id, verdict);
    },

    /** The case's turns after a divergence: written as skipped, so progress and results account for them. */
    async skipEvalTurns(args: EvalTurnArgs & { turns: number }): Promise<void> {
      const ev = await loadEval(args.evalId);
      const c = ev?.plan?.[args.caseIndex];
      if (!ev || !c) return;
      for (let t = args.turnIndex; t < args.turns; t++)
        await repo.insertResult({
          eval_id: ev.id,
          variant_index: args.variantIndex,
          case_index: args.caseIndex,
          turn_index: t,
          case_key: c.key,
          status: 'skipped',
        });
    },
  };

  return {
    /** queued → running, with its cases (found once: a retry or a resumed eval keeps them). */
    async startEval(evalId: string): Promise<EvalPlan> {
      const ev = await loadEval(evalId);
      if (!ev || EVAL_TERMINAL.has(ev.status)) return { over: true, cases: [], variants: 0, concurrency: 1 };
      const started = ev.plan ? ev : await repo.start(evalId, await planCases(repo, ev));
      const plan = started?.plan ?? [];
      return {
        over: !started || EVAL_TERMINAL.has(started.status),
        cases: plan.map((c) => c.turns),
        variants: ev.variants.length,
        concurrency: ev.concurrency,
      };
    },

    /**
     * One case (a recorded conversation or a dataset row) against one
     * variant: its turns in order, each answered (and judged) and written
     * once, so a retried activity (its worker died) goes on from the first
     * turn not written; a diverged turn ends the case, the rest written as
     * skipped. One activity per case: a turn costs no Temporal round trip
     * beyond its session's.
     */
    async replayEvalCase(input: EvalCaseInput): Promise<{ turns: number }> {
      const signal = Context.current().cancellationSignal;
      const prepared = new Set<string>();
      const stop = heartbeating();
      try {
        for (let turnIndex = 0; turnIndex < input.turns; turnIndex++) {
          if (signal.aborted) throw signal.reason;
          const args = { ...input, turnIndex };
          const outcome = await steps.replayEvalTurn(args, prepared);
          if (outcome.judge) await steps.judgeEvalTurn(args);
          if (outcome.status === 'skipped') return { turns: turnIndex };
          if (outcome.status === 'diverged') {
            await steps.skipEvalTurns({ ...args, turnIndex: turnIndex + 1, turns: input.turns });
            return { turns: turnIndex + 1 };
          }
        }
        return { turns: input.turns };
      } finally {
        stop();
      }
    },

    /** Ends the eval (unless a cancel ended it first) and announces it: `eval.completed`, with the eval as data. */
    async finishEval(args: {
      evalId: string;
      status: 'completed' | 'failed' | 'cancelled';
      error?: { code: string; message: string };
    }): Promise<void> {
      await repo.finish(args.evalId, args.status, args.error ?? null);
      const ev = await loadEval(args.evalId);
      if (!ev) return;
      const view = evalView(ev, await repo.results(ev.id));
      await emitProjectWebhooks(deps.db, ev.project_id, 'eval.completed', ev.id, view);
    },
  };
}

export type EvalActivities = ReturnType<typeof createEvalActivities>;
