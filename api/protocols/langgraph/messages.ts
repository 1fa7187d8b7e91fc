/**
 * Our transcript in LangChain's serialised message format, which the Agent
 * Protocol's clients read (`values.messages`, the `messages` stream modes):
 * `type` human / ai / tool, an `id` each, `tool_calls` as
 * `{name, args, id, type: "tool_call"}`. Ids are stable across the stream
 * and the state, so clients merge a streamed answer with the stored one: a
 * human message is known by its run's `message_id` (the id the client gave),
 * an answer by its run and step, a tool result by its run and call.
 */
import type { TranscriptMessage } from '../../../core/repositories/protocol-threads.repository.js';

/** A stored message as the thread's transcript query returns it. */
type TranscriptRow = Omit<TranscriptMessage, 'seq' | 'created_at'>;

export interface LcToolCall {
  name: string;
  args: Record<string, unknown>;
  id: string;
  type: 'tool_call';
}

export type LcMessage = Record<string, unknown> & { type: string; id: string; content: unknown };

/** A field that should be text (or a number) as text; anything else is empty. */
export const asText = (v: unknown): string =>
  typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';

/** The id of the answer of step `step` of a run (streamed chunks and the stored answer share it). */
export const aiMessageId = (runId: string, step: number | string): string => `run-${runId}-${step}`;

/** The id of a tool call's result message. */
export const toolMessageId = (runId: string, callId: string): string => `run-${runId}-tool-${callId}`;

/** A call's arguments as an object (the model's JSON text; what cannot be read is kept as `{}`). */
export function parseArgs(text: unknown): Record<string, unknown> {
  if (text && typeof text === 'object' && !Array.isArray(text)) return text as Record<string, unknown>;
  if (typeof text !== 'string' || text === '') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

export function lcToolCalls(calls: unknown): LcToolCall[] {
  if (!Array.isArray(calls)) return [];
  return calls.map((c: { id?: unknown; name?: unknown; arguments?: unknown }) => ({
    name: asText(c.name),
    args: parseArgs(c.arguments),
    id: asText(c.id),
    type: 'tool_call' as const,
  }));
}

function usageMetadata(usage: unknown): Record<string, number> | undefined {
  const u = usage as { input_tokens?: number; output_tokens?: number } | null;
  if (!u || typeof u.input_tokens !== 'number') return undefined;
  const output = u.output_tokens ?? 0;
  return { input_tokens: u.input_tokens, output_tokens: output, total_tokens: u.input_tokens + output };
}

/** An answer as LangChain's AIMessage. */
export function aiMessage(
  id: string,
  content: unknown,
  toolCalls: LcToolCall[],
  usage?: Record<string, number>,
): LcMessage {
  return {
    type: 'ai',
    id,
    content: content ?? '',
    tool_calls: toolCalls,
    invalid_tool_calls: [],
    additional_kwargs: {},
    response_metadata: {},
    ...(usage ? { usage_metadata: usage } : {}),
  };
}

/**
 * What an MCP result said beside its text (`structured_content`,
 * `resource_links`), as a ToolMessage's `artifact`: LangChain's place for a
 * tool's output that is not for the model.
 */
export function toolArtifact(details: Record<string, unknown>): Record<string, unknown> | undefined {
  const { structured_content, resource_links } = details;
  if (structured_content === undefined && resource_links === undefined) return undefined;
  return {
    ...(structured_content !== undefined ? { structured_content } : {}),
    ...(resource_links !== undefined ? { resource_links } : {}),
  };
}

export function toolMessage(
  id: string,
  callId: string,
  name: string,
  content: unknown,
  isError: boolean,
  artifact?: Record<string, unknown>,
): LcMessage {
  return {
    type: 'tool',
    id,
    content: typeof content === 'string' ? content : JSON.stringify(content ?? ''),
    tool_call_id: callId,
    name,
    status: isError ? 'error' : 'success',
    ...(artifact ? { artifact } : {}),
    additional_kwargs: {},
    response_metadata: {},
  };
}

const stepOf = (stepKey: string | null): string => (stepKey ?? '').split('.')[0] ?? '';

/** One stored message in LangChain's shape, or undefined for what the protocol does not show (system text). */
export function lcMessage(row: TranscriptRow): LcMessage | undefined {
  const runId = row.run_id;
  switch (row.role) {
    case 'user':
      return {
        type: 'human',
        id: row.message_id ?? row.id,
        content: row.content,
        additional_kwargs: {},
        response_metadata: {},
      };
    case 'assistant':
      return aiMessage(
        runId ? aiMessageId(runId, stepOf(row.step_key)) : row.id,
        row.content,
        lcToolCalls(row.tool_calls),
        usageMetadata(row.usage),
      );
    case 'tool': {
      const meta = (row.metadata ?? {}) as { tool_name?: string; is_error?: boolean };
      const callId = row.tool_call_id ?? '';
      return toolMessage(
        runId ? toolMessageId(runId, callId) : row.id,
        callId,
        meta.tool_name ?? '',
        row.content,
        Boolean(meta.is_error),
        toolArtifact((row.metadata ?? {}) as Record<string, unknown>),
      );
    }
    default:
      return undefined;
  }
}

export function lcMessages(rows: TranscriptRow[]): LcMessage[] {
  return rows.map(lcMessage).filter((m): m is LcMessage => m !== undefined);
}

/** An input message as the protocol's clients send it: LangChain's `{type: "human"}` or OpenAI's `{role: "user"}`. */
export interface InputMessage {
  type?: string;
  role?: string;
  content?: unknown;
  id?: string | null;
}

const HUMAN = new Set(['human', 'user']);

/** Whether an input message is the user's (the only kind a turn takes). */
export const isHuman = (m: InputMessage): boolean => HUMAN.has(m.type ?? m.role ?? '');

/** LangChain content (a string, or blocks) as our message: text, or text and image parts. */
export function converseContent(content: unknown): string | Array<Record<string, unknown>> {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((block: Record<string, unknown>) =>
    block.type === 'image_url'
      ? { type: 'image_url', image_url: block.image_url }
      : { type: 'text', text: block.text },
  );
}
