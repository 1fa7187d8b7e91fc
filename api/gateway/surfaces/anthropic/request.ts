import { UnsupportedFeatureError } from '../../../../core/llm/errors.js';
import type {
  ContentPart,
  LlmMessage,
  LlmRequest,
  ProviderFormat,
  ToolChoice,
} from '../../../../core/llm/types.js';
import { invalidRequest } from '../../errors.js';
import { str, isObj, type Obj } from '../json.js';

/**
 * `metadata` only carries a caller label (user_id) for abuse monitoring, so it
 * is safe to leave out; so is `cache_control` (request-level, like the
 * block-level ones): a cache breakpoint changes cost, not the answer, and the
 * other vendors cache prompt prefixes by themselves.
 */
const TRANSLATED = new Set([
  'cache_control',
  'model',
  'messages',
  'max_tokens',
  'system',
  'tools',
  'tool_choice',
  'stop_sequences',
  'temperature',
  'top_p',
  'stream',
  'metadata',
]);

function blocks(content: unknown): Obj[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw invalidRequest('messages: content must be a string or a list of blocks');
  return content as Obj[];
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as Obj[]).map((b) => (b.type === 'text' ? str(b.text) : '')).join('');
}

function contentPart(b: Obj, where: string, target: ProviderFormat): ContentPart {
  if (b.type === 'text') return { type: 'text', text: str(b.text) };
  if (b.type === 'image' && isObj(b.source)) {
    const s = b.source;
    if (s.type === 'base64')
      return {
        type: 'image',
        source: { kind: 'base64', media_type: String(s.media_type), data: String(s.data) },
      };
    if (s.type === 'url') return { type: 'image', source: { kind: 'url', url: String(s.url) } };
  }
  throw new UnsupportedFeatureError(`${where} block of type ${String(b.type)}`, target);
}

function messages(raw: unknown, target: ProviderFormat): LlmMessage[] {
  if (!Array.isArray(raw) || raw.length === 0)
    throw invalidRequest('messages: at least one message is required');
  const out: LlmMessage[] = [];
  (raw as Obj[]).forEach((m, i) => {
    const where = `messages.${i}.content`;
    const list = blocks(m.content);
    if (m.role === 'user') {
      // Results first: they answer the previous assistant turn; any text follows them.
      for (const b of list.filter((b) => b.type === 'tool_result')) {
        out.push({
          role: 'tool',
          tool_call_id: String(b.tool_use_id),
          content: textOf(b.content),
          is_error: b.is_error === true,
        });
      }
      const rest = list.filter((b) => b.type !== 'tool_result');
      if (rest.length) out.push({ role: 'user', content: rest.map((b) => contentPart(b, where, target)) });
    } else if (m.role === 'assistant') {
      const calls = list.filter((b) => b.type === 'tool_use');
      out.push({
        role: 'assistant',
        content: list.filter((b) => b.type !== 'tool_use').map((b) => contentPart(b, where, target)),
        tool_calls: calls.map((b) => ({
          id: String(b.id),
          name: String(b.name),
          arguments: JSON.stringify(b.input ?? {}),
        })),
      });
    } else throw invalidRequest(`messages.${i}.role: Input should be 'user' or 'assistant'`);
  });
  return out;
}

function toolChoice(raw: unknown, target: ProviderFormat): { choice?: ToolChoice; parallel?: boolean } {
  if (raw === undefined) return {};
  if (!isObj(raw)) throw invalidRequest('tool_choice: Input should be an object');
  const parallel = raw.disable_parallel_tool_use === true ? false : undefined;
  switch (raw.type) {
    case 'auto':
    case 'none':
      return { choice: raw.type, parallel };
    case 'any':
      return { choice: 'required', parallel };
    case 'tool':
      return { choice: { name: String(raw.name) }, parallel };
    default:
      throw new UnsupportedFeatureError(`tool_choice ${String(raw.type)}`, target);
  }
}

/** Messages API request → internal, for a provider of another format. */
export function parseAnthropicRequest(body: Obj, model: string, target: ProviderFormat): LlmRequest {
  for (const key of Object.keys(body))
    if (!TRANSLATED.has(key)) throw new UnsupportedFeatureError(key, target);
  const tools = (body.tools ?? []) as Obj[];
  const { choice, parallel } = toolChoice(body.tool_choice, target);
  return {
    model,
    system: body.system === undefined ? undefined : textOf(body.system),
    messages: messages(body.messages, target),
    tools: tools.length
      ? tools.map((t, i) => {
          if (t.type !== undefined && t.type !== 'custom')
            throw new UnsupportedFeatureError(`tools.${i} of type ${str(t.type, 'unknown')}`, target);
          return {
            name: String(t.name),
            description: typeof t.description === 'string' ? t.description : undefined,
            parameters: (t.input_schema ?? { type: 'object' }) as Obj,
          };
        })
      : undefined,
    tool_choice: choice,
    parallel_tool_calls: parallel,
    stop: Array.isArray(body.stop_sequences) ? body.stop_sequences.map(String) : undefined,
    max_tokens: body.max_tokens as number | undefined,
    temperature: body.temperature as number | undefined,
    top_p: body.top_p as number | undefined,
  };
}
