import { invalidField } from '../../errors.js';
import { isObj, type Obj } from '../json.js';
import { notSupported } from './errors.js';
import { parseInput } from './input.js';
import type { Item } from './items.js';

/**
 * A Responses API request, checked field by field before anything is
 * admitted or sent: malformed values and features the gateway does not
 * offer are a 400 naming the field. What is translated is below; a few
 * fields are accepted only at their default (they change nothing then), and
 * `user`, `safety_identifier`, `prompt_cache_key` and `stream_options` are
 * accepted and not forwarded (they label or route a request, and the answer
 * is the same without them).
 */
export interface FunctionTool {
  type: 'function';
  name: string;
  description: string | null;
  parameters: Obj;
  strict: boolean | null;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; name: string };

export type TextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Obj; strict: boolean | null; description?: string };

export interface ResponsesRequest {
  /** This request's own input items (a previous response's are added by the surface). */
  input: Item[];
  instructions: string | null;
  tools: FunctionTool[];
  tool_choice: ToolChoice;
  parallel_tool_calls: boolean;
  text: { format: TextFormat; verbosity: 'medium' };
  max_output_tokens: number | null;
  temperature: number | null;
  top_p: number | null;
  metadata: Record<string, string>;
  store: boolean;
  stream: boolean;
  previous_response_id: string | null;
  user: string | null;
}

const TRANSLATED = new Set([
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'text',
  'max_output_tokens',
  'temperature',
  'top_p',
  'metadata',
  'store',
  'stream',
  'previous_response_id',
]);

const IGNORED = new Set(['model', 'user', 'safety_identifier', 'prompt_cache_key', 'stream_options']);

/** Features this gateway leaves out, by field: a 400 naming it whenever it asks for something. */
const OUT_OF_SCOPE: Record<string, (v: unknown) => [what: string, hint?: string] | undefined> = {
  background: (v) => (v === true ? ['Background mode'] : undefined),
  conversation: (v) =>
    v != null ? ['A conversation object', 'continue a conversation with previous_response_id'] : undefined,
  prompt: (v) => (v != null ? ['A stored prompt', 'send instructions and input'] : undefined),
};

/** Accepted only at their default value: anything else has no translation to the providers. */
const DEFAULT_ONLY: Record<string, (v: unknown) => boolean> = {
  include: (v) => v == null || (Array.isArray(v) && v.length === 0),
  truncation: (v) => v == null || v === 'disabled',
  service_tier: (v) => v == null || v === 'auto' || v === 'default',
  reasoning: (v) => v == null || (isObj(v) && Object.values(v).every((x) => x == null)),
  max_tool_calls: (v) => v == null,
  top_logprobs: (v) => v == null || v === 0,
  prompt_cache_retention: (v) => v == null,
  context_management: (v) => v == null,
};

/** OpenAI's built-in tools; named as such in the refusal. */
const HOSTED_TOOLS = new Set([
  'web_search',
  'web_search_preview',
  'web_search_preview_2025_03_11',
  'web_search_2025_08_26',
  'file_search',
  'computer_use_preview',
  'computer_use',
  'code_interpreter',
  'image_generation',
  'mcp',
  'local_shell',
  'shell',
  'apply_patch',
]);

const badType = (param: string, expected: string) =>
  invalidField(param, `Invalid type for '${param}': expected ${expected}.`);

function optional<T>(body: Obj, key: string, check: (v: unknown) => v is T, expected: string): T | null {
  const v = body[key];
  if (v === undefined || v === null) return null;
  if (!check(v)) throw badType(key, expected);
  return v;
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isBool = (v: unknown): v is boolean => typeof v === 'boolean';

function number(body: Obj, key: string, min: number, max: number, integer = false): number | null {
  const v = body[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isFinite(v) || (integer && !Number.isInteger(v)))
    throw badType(key, integer ? 'an integer' : 'a number');
  if (v < min || v > max)
    throw invalidField(key, `Invalid '${key}': expected a value from ${min} to ${max}, got ${v}.`);
  return v;
}

function tools(raw: unknown): FunctionTool[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw badType('tools', 'an array');
  return raw.map((t: unknown, i): FunctionTool => {
    const at = `tools[${i}]`;
    if (!isObj(t)) throw badType(at, 'an object');
    if (t.type !== 'function') {
      const type = JSON.stringify(t.type);
      const what = HOSTED_TOOLS.has(String(t.type)) ? `The hosted tool ${type}` : `A tool of type ${type}`;
      throw notSupported(`${at}.type`, what, 'only function tools are');
    }
    if (typeof t.name !== 'string' || t.name === '') throw badType(`${at}.name`, 'a non-empty string');
    if (t.parameters != null && !isObj(t.parameters))
      throw badType(`${at}.parameters`, 'a JSON Schema object');
    if (t.description != null && typeof t.description !== 'string')
      throw badType(`${at}.description`, 'a string');
    if (t.strict != null && typeof t.strict !== 'boolean') throw badType(`${at}.strict`, 'a boolean');
    return {
      type: 'function',
      name: t.name,
      description: (t.description as string | undefined) ?? null,
      parameters: (t.parameters as Obj | undefined) ?? { type: 'object', properties: {} },
      strict: (t.strict as boolean | undefined) ?? null,
    };
  });
}

function toolChoice(raw: unknown, declared: FunctionTool[]): ToolChoice {
  if (raw === undefined || raw === null) return 'auto';
  if (raw === 'auto' || raw === 'none' || raw === 'required') return raw;
  if (isObj(raw) && raw.type === 'function') {
    if (typeof raw.name !== 'string') throw badType('tool_choice.name', 'a string');
    if (!declared.some((t) => t.name === raw.name))
      throw invalidField('tool_choice', `Invalid 'tool_choice': no function named '${raw.name}' in 'tools'.`);
    return { type: 'function', name: raw.name };
  }
  if (isObj(raw))
    throw notSupported(
      'tool_choice',
      `A tool_choice of type ${JSON.stringify(raw.type)}`,
      'only function tools are',
    );
  throw badType('tool_choice', "'auto', 'none', 'required' or {type: 'function', name}");
}

function textFormat(raw: unknown): TextFormat {
  if (raw === undefined || raw === null) return { type: 'text' };
  if (!isObj(raw)) throw badType('text', 'an object');
  for (const key of Object.keys(raw))
    if (key !== 'format' && key !== 'verbosity')
      throw invalidField(`text.${key}`, `Unrecognized request argument supplied: text.${key}`);
  if (raw.verbosity != null && raw.verbosity !== 'medium')
    throw notSupported('text.verbosity', 'A verbosity other than medium');
  const f = raw.format;
  if (f === undefined || f === null) return { type: 'text' };
  if (!isObj(f)) throw badType('text.format', 'an object');
  if (f.type === 'text' || f.type === 'json_object') return { type: f.type };
  if (f.type !== 'json_schema')
    throw invalidField(
      'text.format.type',
      `Invalid value for 'text.format.type': expected text, json_object or json_schema.`,
    );
  if (typeof f.name !== 'string' || f.name === '') throw badType('text.format.name', 'a non-empty string');
  if (!isObj(f.schema)) throw badType('text.format.schema', 'a JSON Schema object');
  if (f.strict != null && typeof f.strict !== 'boolean') throw badType('text.format.strict', 'a boolean');
  if (f.description != null && typeof f.description !== 'string')
    throw badType('text.format.description', 'a string');
  return {
    type: 'json_schema',
    name: f.name,
    schema: f.schema,
    strict: (f.strict as boolean | undefined) ?? null,
    ...(typeof f.description === 'string' ? { description: f.description } : {}),
  };
}

/** OpenAI's limits: 16 pairs, keys up to 64 characters, string values up to 512. */
function metadata(raw: unknown): Record<string, string> {
  if (raw === undefined || raw === null) return {};
  if (!isObj(raw)) throw badType('metadata', 'an object of strings');
  const entries = Object.entries(raw);
  if (entries.length > 16) throw invalidField('metadata', "Invalid 'metadata': at most 16 keys.");
  for (const [k, v] of entries) {
    if (k.length > 64)
      throw invalidField(
        'metadata',
        `Invalid 'metadata': key '${k.slice(0, 64)}…' is longer than 64 characters.`,
      );
    if (typeof v !== 'string') throw badType(`metadata.${k}`, 'a string');
    if (v.length > 512)
      throw invalidField(`metadata.${k}`, `Invalid 'metadata.${k}': longer than 512 characters.`);
  }
  return raw as Record<string, string>;
}

export function parseResponsesRequest(body: Obj): ResponsesRequest {
  for (const [key, value] of Object.entries(body)) {
    const refused = OUT_OF_SCOPE[key]?.(value);
    if (refused) throw notSupported(key, ...refused);
    const atDefault = DEFAULT_ONLY[key];
    if (atDefault && !atDefault(value)) throw notSupported(key, `A non-default ${key}`);
    if (!atDefault && !OUT_OF_SCOPE[key] && !IGNORED.has(key) && !TRANSLATED.has(key))
      throw invalidField(key, `Unrecognized request argument supplied: ${key}`);
  }
  const declared = tools(body.tools);
  return {
    input: parseInput(body.input),
    instructions: optional(body, 'instructions', isString, 'a string'),
    tools: declared,
    tool_choice: toolChoice(body.tool_choice, declared),
    parallel_tool_calls: optional(body, 'parallel_tool_calls', isBool, 'a boolean') ?? true,
    text: { format: textFormat(body.text), verbosity: 'medium' },
    max_output_tokens: number(body, 'max_output_tokens', 1, 1_000_000, true),
    temperature: number(body, 'temperature', 0, 2),
    top_p: number(body, 'top_p', 0, 1),
    metadata: metadata(body.metadata),
    store: optional(body, 'store', isBool, 'a boolean') ?? true,
    stream: optional(body, 'stream', isBool, 'a boolean') ?? false,
    previous_response_id: optional(body, 'previous_response_id', isString, 'a string'),
    user: optional(body, 'user', isString, 'a string'),
  };
}
