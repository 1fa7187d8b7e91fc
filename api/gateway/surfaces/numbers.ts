import { invalidField } from '../errors.js';
import { isObj, type Obj } from './json.js';

/**
 * The scalar fields of a chat request that the gateway meters by or reads
 * itself (output limits, choices, `stream`) and the sampling numbers every
 * vendor bounds, checked before admission: a value the vendor would refuse,
 * or one that would make the call unmeterable (`max_tokens: 3e9`), is a 400
 * naming the field, in the surface's own shape, before anything is counted.
 */
export interface FieldRule {
  /** Path from the body, e.g. ['generationConfig', 'candidateCount']. */
  path: string[];
  kind: 'integer' | 'number' | 'boolean';
  min?: number;
  max?: number;
}

/** No vendor writes more than this in one answer; a larger limit is a mistake, not a request. */
export const MAX_OUTPUT_LIMIT = 10_000_000;

const int = (path: string[], min: number, max = Number.MAX_SAFE_INTEGER): FieldRule => ({
  path,
  kind: 'integer',
  min,
  max,
});
const num = (path: string[], min: number, max: number): FieldRule => ({ path, kind: 'number', min, max });
const bool = (path: string[]): FieldRule => ({ path, kind: 'boolean' });

export const OPENAI_CHAT_RULES: FieldRule[] = [
  int(['max_tokens'], 1, MAX_OUTPUT_LIMIT),
  int(['max_completion_tokens'], 1, MAX_OUTPUT_LIMIT),
  int(['n'], 1, 128),
  num(['temperature'], 0, 2),
  num(['top_p'], 0, 1),
  num(['presence_penalty'], -2, 2),
  num(['frequency_penalty'], -2, 2),
  int(['top_logprobs'], 0, 20),
  int(['seed'], Number.MIN_SAFE_INTEGER),
  bool(['stream']),
  bool(['logprobs']),
  bool(['parallel_tool_calls']),
];

export const ANTHROPIC_RULES: FieldRule[] = [
  int(['max_tokens'], 1, MAX_OUTPUT_LIMIT),
  num(['temperature'], 0, 1),
  num(['top_p'], 0, 1),
  int(['top_k'], 0),
  bool(['stream']),
];

const gen = (field: string) => ['generationConfig', field];
export const GEMINI_RULES: FieldRule[] = [
  int(gen('maxOutputTokens'), 1, MAX_OUTPUT_LIMIT),
  int(gen('candidateCount'), 1, 8),
  num(gen('temperature'), 0, 2),
  num(gen('topP'), 0, 1),
  int(gen('topK'), 0),
  int(gen('seed'), Number.MIN_SAFE_INTEGER),
  num(gen('presencePenalty'), -2, 2),
  num(gen('frequencyPenalty'), -2, 2),
  bool(gen('responseLogprobs')),
  int(gen('logprobs'), 0, 20),
];

const KIND_TEXT = { integer: 'an integer', number: 'a number', boolean: 'a boolean' } as const;

/** Throws a 400 naming the first field of `body` that breaks its rule (absent and null fields pass). */
export function checkFields(body: Obj, rules: FieldRule[]): void {
  for (const rule of rules) {
    const value = valueAt(body, rule.path);
    if (value === undefined || value === null) continue;
    const problem = problemOf(rule, value);
    if (problem) {
      const param = rule.path.join('.');
      throw invalidField(param, `Invalid '${param}': ${problem}.`);
    }
  }
}

function valueAt(body: Obj, path: string[]): unknown {
  let at: unknown = body;
  for (const key of path) {
    if (!isObj(at)) return undefined;
    at = at[key];
  }
  return at;
}

function problemOf(rule: FieldRule, value: unknown): string | undefined {
  if (rule.kind === 'boolean')
    return typeof value === 'boolean' ? undefined : `expected a boolean, got ${describe(value)}`;
  const integer = rule.kind === 'integer';
  if (typeof value !== 'number' || !Number.isFinite(value) || (integer && !Number.isInteger(value)))
    return `expected ${KIND_TEXT[rule.kind]}, got ${describe(value)}`;
  const { min = -Infinity, max = Infinity } = rule;
  if (value < min || value > max) return `expected a value from ${min} to ${max}, got ${value}`;
  return undefined;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number') return String(value);
  return Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : typeof value;
}

/** The call's output limit per choice, the largest it set when it set several; undefined when none. */
export function askedOutputLimit(body: Obj): number | undefined {
  const config = isObj(body.generationConfig) ? body.generationConfig : {};
  const limits = [
    body.max_completion_tokens,
    body.max_tokens,
    body.max_output_tokens,
    config.maxOutputTokens,
  ];
  const set = limits.filter((v): v is number => typeof v === 'number');
  return set.length > 0 ? Math.max(...set) : undefined;
}

/** How many choices the vendor writes and bills: OpenAI's `n`, Gemini's `candidateCount` (1 when unset). */
export function askedChoices(body: Obj): number {
  const config = isObj(body.generationConfig) ? body.generationConfig : {};
  const choices = [body.n, config.candidateCount].filter((v): v is number => typeof v === 'number');
  return Math.max(1, ...choices);
}
