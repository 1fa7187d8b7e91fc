import { describe, expect, it } from 'vitest';
import type { DbEval, DbEvalResult } from '../../core/db/tables/evals.js';
import { canonicalJson, exactMatch, sameArguments } from '../../core/evals/compare.js';
import { evalView } from '../../core/evals/eval-view.js';

describe('eval comparisons', () => {
  it('arguments are the same when deep-equal as JSON with keys sorted, at any depth', () => {
    expect(
      sameArguments('{"a":1,"b":{"y":2,"x":[1,{"q":1,"p":2}]}}', '{"b":{"x":[1,{"p":2,"q":1}],"y":2},"a":1}'),
    ).toBe(true);
    expect(sameArguments('{"a":1}', '{"a":"1"}')).toBe(false);
    // Array order matters; an empty argument string is an empty object.
    expect(sameArguments('{"a":[1,2]}', '{"a":[2,1]}')).toBe(false);
    expect(sameArguments('', '{}')).toBe(true);
    // Unreadable JSON compares as its text.
    expect(sameArguments('{oops', '{oops')).toBe(true);
    expect(sameArguments('{oops', '{}')).toBe(false);
    expect(canonicalJson({ b: 1, a: [{ d: 1, c: 2 }] })).toBe('{"a":[{"c":2,"d":1}],"b":1}');
  });

  it('exact match: text trimmed, JSON expectations against the answer read as JSON', () => {
    expect(exactMatch(' Paris\n', 'Paris')).toBe(true);
    expect(exactMatch('paris', 'Paris')).toBe(false);
    expect(exactMatch('{"b":2,"a":1}', { a: 1, b: 2 })).toBe(true);
    expect(exactMatch('not json', { a: 1 })).toBe(false);
    expect(exactMatch(null, 'x')).toBe(false);
    expect(exactMatch('x', null)).toBe(false);
  });
});

const base: DbEval = {
  id: 'e',
  project_id: 'p',
  agent_id: 'a',
  conversation_ids: ['c'],
  dataset_id: null,
  variants: [
    {
      name: 'a',
      prompt_version_id: null,
      prompt_version: null,
      prompt_label: null,
      model_id: null,
      parameters: null,
    },
    {
      name: 'b',
      prompt_version_id: null,
      prompt_version: null,
      prompt_label: null,
      model_id: null,
      parameters: null,
    },
  ],
  concurrency: 1,
  judge: null,
  thresholds: { min_exact_match_rate: 0.5, max_cost_ratio: 1.5 },
  execute_diverged_tools: false,
  status: 'completed',
  plan: [{ key: 'c', turns: 2 }],
  error: null,
  workflow_id: 'eval/e',
  created_at: new Date(0),
  started_at: new Date(0),
  finished_at: new Date(0),
};

function row(variant: number, turn: number, r: Partial<DbEvalResult>): DbEvalResult {
  return {
    id: `${variant}-${turn}`,
    eval_id: 'e',
    variant_index: variant,
    case_index: 0,
    turn_index: turn,
    case_key: 'c',
    status: 'completed',
    input: 'hi',
    expected: 'x',
    original: {
      run_id: 'r',
      output: 'x',
      input_tokens: 10,
      output_tokens: 5,
      cost_usd: 0.01,
      latency_ms: 100,
    },
    run_id: 'v',
    output: 'x',
    structured: null,
    input_tokens: 10,
    output_tokens: 5,
    cost_usd: '0.01',
    latency_ms: 50,
    exact_match: true,
    schema_valid: null,
    judge_score: null,
    judge_reason: null,
    judge_usage: null,
    error: null,
    created_at: new Date(0),
    ...r,
  };
}

describe('eval totals and verdict', () => {
  it('totals per variant, and the verdict from every variant against every threshold', () => {
    const view = evalView(base, [
      row(0, 0, {}),
      row(0, 1, {}),
      row(1, 0, { cost_usd: '0.03', exact_match: false, output: 'y' }),
      row(1, 1, { status: 'diverged', exact_match: false, cost_usd: '0.02', output: null, latency_ms: null }),
    ]);
    expect(view.progress).toEqual({ turns_total: 4, turns_done: 4 });
    expect(view.totals[0]).toMatchObject({
      exact_match_rate: 1,
      cost_ratio: 1,
      mean_latency_ms: 50,
      passed: true,
    });
    // The diverged turn counts against the match rate; the cost ratio is over the turns both answered.
    expect(view.totals[1]).toMatchObject({
      completed: 1,
      diverged: 1,
      exact_match_rate: 0,
      cost_usd: 0.05,
      original_cost_usd: 0.01,
      cost_ratio: 3,
      passed: false,
    });
    expect(view.totals[1]!.failures).toEqual([
      'exact_match_rate 0 is below 0.5',
      'cost_ratio 3 is above 1.5',
    ]);
    expect(view.passed).toBe(false);
  });

  it('no verdict while running or without thresholds; a missing judge fails a judge threshold', () => {
    expect(evalView({ ...base, status: 'running' }, [row(0, 0, {})]).passed).toBeNull();
    expect(evalView({ ...base, thresholds: null }, [row(0, 0, {})]).passed).toBeNull();
    const judged = evalView({ ...base, thresholds: { min_judge_score: 0.5 } }, [
      row(0, 0, {}),
      row(1, 0, {}),
    ]);
    expect(judged.totals[0]!.failures).toEqual(['mean_judge_score n/a is below 0.5']);
    expect(judged.passed).toBe(false);
  });
});
