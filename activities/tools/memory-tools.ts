/**
 * The memory tools an agent with `memory_tools` is offered: `memory_save`
 * and `memory_search` over its project's memory store (core/memory/), the
 * same items the Agent Protocol's `/store` reads and writes. By default an
 * agent's memories live under `["memories", <agent id>]`; a call may name
 * another namespace of the project. Nothing here touches Temporal: the
 * session activity (activities/session/mcp-call.ts) runs a call and stores
 * its result.
 */
import { createHash } from 'node:crypto';
import type { ToolDefinition } from '../../core/llm/types.js';
import { MemoryStore } from '../../core/memory/memory-store.js';
import type { EmbedDeps } from '../../core/memory/embedder.js';
import { NAMESPACE_LABEL_RULE, validLabel } from '../../core/memory/namespace.js';
import { StoreEmbeddingError } from '../../core/memory/errors.js';
import { UnsupportedFeatureError, UpstreamError } from '../../core/llm/errors.js';
import { BudgetExceededError, RateLimitedError, UnpricedModelError } from '../../core/metering/errors.js';

export const MEMORY_SAVE = 'memory_save';
export const MEMORY_SEARCH = 'memory_search';
export const MEMORY_TOOL_NAMES = [MEMORY_SAVE, MEMORY_SEARCH];
const SEARCH_LIMIT = { default: 5, max: 20 };

const namespaceParam = {
  type: 'array',
  items: { type: 'string' },
  description: "Where the memory lives, as a path of labels; default: this agent's own memories.",
};

export const MEMORY_TOOLS: ToolDefinition[] = [
  {
    name: MEMORY_SAVE,
    description:
      'Saves a memory that lasts beyond this conversation (facts about the user, preferences, decisions). ' +
      'Saving again under the same key replaces it. Returns where it was saved.',
    parameters: {
      type: 'object',
      properties: {
        value: {
          description: 'The memory: a JSON object, or a text (stored as {"content": text}).',
          anyOf: [{ type: 'object' }, { type: 'string' }],
        },
        key: { type: 'string', description: 'Its key, to replace it later; default: a new key.' },
        namespace: namespaceParam,
      },
      required: ['value'],
    },
  },
  {
    name: MEMORY_SEARCH,
    description:
      'Searches saved memories, most relevant first. Returns a JSON list of {namespace, key, value, score}.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'What to look for.' },
        namespace: {
          ...namespaceParam,
          description: "Search under this path; default: this agent's memories.",
        },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: SEARCH_LIMIT.max,
          description: 'At most this many (default 5).',
        },
      },
      required: ['query'],
    },
  },
];

/** The call that uses a memory tool: whose memories, and which call (its default key). */
export interface MemoryCall {
  projectId: string;
  agentId: string;
  conversationId: string;
  /** `<run>:<step>:<call id>`: the same on every attempt, so a retried save writes one item. */
  callKey: string;
  name: string;
  args: Record<string, unknown>;
}

export interface MemoryResult {
  output: string;
  isError: boolean;
}

const fail = (output: string): MemoryResult => ({ output, isError: true });

/** The call's namespace, the agent's own by default; a string or a list of labels. */
function namespaceOf(call: MemoryCall): string[] | string {
  const given = call.args.namespace;
  if (given === undefined || given === null) return ['memories', call.agentId];
  const labels = typeof given === 'string' ? [given] : given;
  if (!Array.isArray(labels) || labels.length === 0 || !labels.every(validLabel))
    return `"namespace" must be a non-empty list of labels; ${NAMESPACE_LABEL_RULE}`;
  return labels;
}

/** A key derived from the call: new for each call, the same for its retries. */
const keyOf = (callKey: string) => createHash('sha256').update(callKey).digest('hex').slice(0, 32);

async function save(store: MemoryStore, call: MemoryCall, namespace: string[]): Promise<MemoryResult> {
  const { value, key } = call.args;
  const item =
    typeof value === 'string'
      ? { content: value }
      : typeof value === 'object' && value !== null && !Array.isArray(value)
        ? (value as Record<string, unknown>)
        : undefined;
  if (!item) return fail('"value" must be a JSON object or a text');
  if (key !== undefined && (typeof key !== 'string' || key === ''))
    return fail('"key" must be a non-empty text');
  const k = typeof key === 'string' ? key : keyOf(call.callKey);
  await store.put(call.projectId, { namespace, key: k, value: item });
  return { output: JSON.stringify({ saved: { namespace, key: k } }), isError: false };
}

async function search(store: MemoryStore, call: MemoryCall, namespace: string[]): Promise<MemoryResult> {
  const { query, limit } = call.args;
  if (typeof query !== 'string' || query.trim() === '') return fail('"query" must be a non-empty text');
  if (limit !== undefined && (!Number.isInteger(limit) || (limit as number) < 1))
    return fail('"limit" must be a positive integer');
  const rows = await store.search(call.projectId, {
    prefix: namespace,
    limit: Math.min((limit as number | undefined) ?? SEARCH_LIMIT.default, SEARCH_LIMIT.max),
    offset: 0,
    query,
  });
  const found = rows.map((r) => ({
    namespace: r.namespace,
    key: r.key,
    value: r.value,
    score: r.score ?? null,
  }));
  return { output: JSON.stringify(found), isError: false };
}

/**
 * Runs one memory tool call. Bad arguments and a store that cannot embed
 * (its model, its key) come back as the tool's error for the model; a
 * database failure throws (the activity retries).
 */
export async function runMemoryTool(deps: EmbedDeps, call: MemoryCall): Promise<MemoryResult> {
  const namespace = namespaceOf(call);
  if (typeof namespace === 'string') return fail(namespace);
  const store = new MemoryStore(deps, { agentId: call.agentId, conversationId: call.conversationId });
  try {
    if (call.name === MEMORY_SAVE) return await save(store, call, namespace);
    if (call.name === MEMORY_SEARCH) return await search(store, call, namespace);
    return fail(`"${call.name}" is not a memory tool`);
  } catch (err) {
    if (isModelCallFailure(err)) return fail(`tool "${call.name}" failed: ${(err as Error).message}`);
    throw err;
  }
}

/** The store's embedding call failing (its setting, its key, the vendor): the model hears of it. */
const isModelCallFailure = (err: unknown): boolean =>
  err instanceof StoreEmbeddingError ||
  err instanceof UpstreamError ||
  err instanceof UnsupportedFeatureError ||
  err instanceof RateLimitedError ||
  err instanceof BudgetExceededError ||
  err instanceof UnpricedModelError;
