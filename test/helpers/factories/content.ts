import fc from 'fast-check';
import type { Knex } from 'knex';
import type { TestApi } from '../api.js';
import { uniqueName } from '../factories.js';

/** Factories for prompts, schemas and conversations; rows the API cannot write yet go in through knex. */

export const PROMPTS = '/api/agent-server/prompts';
export const SCHEMAS = '/api/agent-server/schemas';
export const CONVERSATIONS = '/api/agent-server/conversations';

export interface PromptData {
  id: string;
  project_id: string;
  name: string;
  latest_version: number;
  labels: { production: number | null; latest: number };
  created_at: string;
  updated_at: string;
}

export interface PromptVersionData {
  id: string;
  prompt_id: string;
  name: string;
  version: number;
  template: string;
  label: 'production' | 'latest' | null;
  labels: Array<'production' | 'latest'>;
  variables: string[];
  commit_message: string;
  created_at: string;
}

export interface SchemaData {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  schema: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export interface ConversationData {
  id: string;
  project_id: string;
  namespace: string;
  context: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export interface ThreadData {
  id: string;
  conversation_id: string;
  agent_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface MessageData {
  id: string;
  thread_id: string;
  role: string;
  content: unknown;
  tool_calls?: unknown;
  tool_call_id?: string;
  usage?: unknown;
  created_at: string;
}

export const db = (api: TestApi): Knex => api.server.deps.db;

async function insertRow(api: TestApi, table: string, row: Record<string, unknown>): Promise<string> {
  const [created] = await db(api)<Record<string, unknown>>(table)
    .insert(row)
    .returning<Array<{ id: string }>>('id');
  return created!.id;
}

function expectOk<T>(res: { status: number; text: string; body: { data: T } }, what: string): T {
  if (res.status !== 200) throw new Error(`${what} failed: ${res.status} ${res.text}`);
  return res.body.data;
}

export async function createPrompt(
  api: TestApi,
  projectId: string,
  body: Record<string, unknown> = {},
): Promise<PromptData> {
  const res = await api.request<PromptData>('POST', `${PROMPTS}?project_id=${projectId}`, {
    name: uniqueName('prompt'),
    template: 'You are {{role}}.',
    commit_message: 'first',
    ...body,
  });
  return expectOk(res, 'createPrompt');
}

export async function createSchema(
  api: TestApi,
  projectId: string,
  body: Record<string, unknown> = {},
): Promise<SchemaData> {
  const res = await api.request<SchemaData>('POST', `${SCHEMAS}?project_id=${projectId}`, {
    name: uniqueName('schema'),
    schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] },
    ...body,
  });
  return expectOk(res, 'createSchema');
}

export async function createConversation(
  api: TestApi,
  projectId: string,
  body: Record<string, unknown> = {},
): Promise<ConversationData> {
  const res = await api.request<ConversationData>('POST', `${CONVERSATIONS}?project_id=${projectId}`, body);
  return expectOk(res, 'createConversation');
}

/** A model and an agent row referencing the given prompt (and schema), as the agents API will write them. */
export async function insertAgent(
  api: TestApi,
  projectId: string,
  refs: { prompt_id: string; schema_id?: string; llm_summarizer_prompt_id?: string },
): Promise<{ id: string; name: string; model_id: string }> {
  const modelId = await insertRow(api, 'models', {
    project_id: projectId,
    name: uniqueName('model'),
    model_id: 'gpt-test',
    provider_type: 'openai',
  });
  const name = uniqueName('agent');
  const id = await insertRow(api, 'agents', { project_id: projectId, name, model_id: modelId, ...refs });
  return { id, name, model_id: modelId };
}

/** A thread of a conversation, optionally linked to an agent. */
export async function insertThread(
  api: TestApi,
  projectId: string,
  conversationId: string,
  agentId?: string,
) {
  const conv = await db(api)<{ pk: string; project_id: string; id: string }>('conversations')
    .where({ project_id: projectId, id: conversationId })
    .first('pk');
  if (!conv) throw new Error(`no conversation ${conversationId}`);
  return insertRow(api, 'threads', { conversation_pk: conv.pk, agent_id: agentId ?? null });
}

/** Messages in the given order (their `seq` follows insertion). */
export async function insertMessages(
  api: TestApi,
  threadId: string,
  messages: Array<{
    role: string;
    content: unknown;
    tool_calls?: unknown;
    tool_call_id?: string;
    usage?: unknown;
  }>,
): Promise<string[]> {
  const ids: string[] = [];
  for (const m of messages) {
    ids.push(
      await insertRow(api, 'messages', {
        thread_id: threadId,
        role: m.role,
        content: JSON.stringify(m.content),
        tool_calls: m.tool_calls === undefined ? null : JSON.stringify(m.tool_calls),
        tool_call_id: m.tool_call_id ?? null,
        usage: m.usage === undefined ? null : JSON.stringify(m.usage),
      }),
    );
  }
  return ids;
}

/**
 * Random request bodies for property tests: any JSON at all, or objects over
 * the route's own keys (plus a stray one) with any JSON values.
 */
export const randomBody = (keys: string[]) =>
  fc.oneof(
    fc.jsonValue(),
    fc.dictionary(fc.constantFrom(...keys, 'stray'), fc.jsonValue({ maxDepth: 3 }), {
      maxKeys: keys.length + 1,
    }),
    fc.record(
      Object.fromEntries(keys.map((k) => [k, fc.oneof(fc.string(), fc.jsonValue({ maxDepth: 2 }))])),
      {
        requiredKeys: [],
      },
    ),
  );

/** Asserts the interface envelope with no 5xx; returns the status. */
export function expectEnvelope(res: { status: number; text: string; body: unknown }): number {
  if (res.status >= 500) throw new Error(`5xx: ${res.status} ${res.text}`);
  const body = res.body as Record<string, unknown> | undefined;
  if (
    !body ||
    typeof body.error !== 'boolean' ||
    typeof body.message !== 'string' ||
    body.status !== res.status ||
    typeof body.data !== 'object' ||
    typeof body.errorDetails !== 'object'
  ) {
    throw new Error(`not the envelope: ${res.status} ${res.text}`);
  }
  return res.status;
}
