import { toCacheControl } from '../../../../core/llm/cache-control.js';
import { UnsupportedFeatureError } from '../../../../core/llm/errors.js';
import type {
  CacheControl,
  ContentPart,
  LlmMessage,
  LlmRequest,
  ProviderFormat,
  ResponseFormat,
  TextPart,
  ToolCall,
  ToolChoice,
} from '../../../../core/llm/types.js';
import { invalidRequest } from '../../errors.js';
import { str, isObj, type Obj } from '../json.js';

/** Fields translated; `user` only labels the caller for the vendor's abuse monitoring, so it is safe to leave out. */
const TRANSLATED = new Set([
  'model',
  'messages',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'response_format',
  'stop',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'stream',
  'stream_options',
  'n',
  'user',
]);

export function parseDataUrl(url: string): { media_type: string; data: string } | undefined {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return m ? { media_type: m[1]!, data: m[2]! } : undefined;
}

function parts(content: unknown, where: string, target: ProviderFormat): ContentPart[] {
  if (content == null) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw invalidRequest(`${where}.content must be a string or an array`);
  return content.map((p: Obj, i): ContentPart => {
    const cc = toCacheControl(p.cache_control);
    if (p.type === 'text') return { type: 'text', text: str(p.text), ...(cc && { cache_control: cc }) };
    if (p.type === 'image_url' && isObj(p.image_url) && typeof p.image_url.url === 'string') {
      const data = parseDataUrl(p.image_url.url);
      return {
        type: 'image',
        source: data ? { kind: 'base64', ...data } : { kind: 'url', url: p.image_url.url },
        ...(cc && { cache_control: cc }),
      };
    }
    throw new UnsupportedFeatureError(`${where}.content[${i}] of type ${String(p.type)}`, target);
  });
}

/** A message-level cache_control (the shape LiteLLM's injection produces) marks the message's last block. */
function markLast<T extends { cache_control?: CacheControl }>(items: T[], m: Obj): T[] {
  const cc = toCacheControl(m.cache_control);
  const last = items[items.length - 1];
  if (cc && last) items[items.length - 1] = { ...last, cache_control: cc };
  return items;
}

/** A system message as text blocks with their cache breakpoints (string content is one block). */
function systemBlocks(m: Obj): TextPart[] {
  const blocks: TextPart[] =
    typeof m.content === 'string'
      ? [{ type: 'text', text: m.content }]
      : Array.isArray(m.content)
        ? (m.content as Obj[])
            .filter((p) => typeof p.text === 'string')
            .map((p) => {
              const cc = toCacheControl(p.cache_control);
              return { type: 'text', text: p.text as string, ...(cc && { cache_control: cc }) };
            })
        : [];
  return markLast(blocks, m);
}

/** A tool result is one block on the Anthropic side: a breakpoint on the message or any of its parts marks it. */
function toolResultCache(m: Obj): CacheControl | undefined {
  const parts = Array.isArray(m.content) ? (m.content as Obj[]) : [];
  let cc = toCacheControl(m.cache_control);
  for (const p of parts) cc = toCacheControl(p.cache_control) ?? cc;
  return cc;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content.map((p: Obj) => (typeof p.text === 'string' ? p.text : '')).join('');
  return '';
}

function messages(
  raw: unknown,
  target: ProviderFormat,
): Pick<LlmRequest, 'system' | 'system_blocks' | 'messages'> {
  if (!Array.isArray(raw) || raw.length === 0) throw invalidRequest("'messages' must be a non-empty array");
  const system: string[] = [];
  const blocks: TextPart[] = [];
  const out: LlmMessage[] = [];
  raw.forEach((m: Obj, i) => {
    const where = `messages[${i}]`;
    switch (m.role) {
      case 'system':
      case 'developer':
        system.push(textOf(m.content));
        blocks.push(...systemBlocks(m));
        break;
      case 'user':
        out.push({ role: 'user', content: markLast(parts(m.content, where, target), m) });
        break;
      case 'assistant': {
        const calls = Array.isArray(m.tool_calls) ? (m.tool_calls as Obj[]) : [];
        const toolCalls = calls.map((c, j): ToolCall => {
          if (c.type !== 'function' || !isObj(c.function))
            throw new UnsupportedFeatureError(`${where}.tool_calls[${j}] of type ${String(c.type)}`, target);
          return { id: String(c.id), name: String(c.function.name), arguments: str(c.function.arguments) };
        });
        const content = parts(m.content, where, target);
        // Anthropic puts the tool_use blocks after the text, so the last block is the last call when there is one.
        if (toolCalls.length) markLast(toolCalls, m);
        else markLast(content, m);
        out.push({ role: 'assistant', content, tool_calls: toolCalls });
        break;
      }
      case 'tool': {
        const cc = toolResultCache(m);
        out.push({
          role: 'tool',
          tool_call_id: String(m.tool_call_id),
          content: textOf(m.content),
          ...(cc && { cache_control: cc }),
        });
        break;
      }
      default:
        throw new UnsupportedFeatureError(`${where}.role "${String(m.role)}"`, target);
    }
  });
  return {
    system: system.length ? system.join('\n\n') : undefined,
    // Only when a breakpoint needs them: the plain joined text is what every provider got before.
    ...(blocks.some((b) => b.cache_control) ? { system_blocks: blocks } : {}),
    messages: out,
  };
}

function toolChoice(raw: unknown, target: ProviderFormat): ToolChoice | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'auto' || raw === 'none' || raw === 'required') return raw;
  if (isObj(raw) && raw.type === 'function' && isObj(raw.function))
    return { name: String(raw.function.name) };
  throw new UnsupportedFeatureError('tool_choice of this form', target);
}

function responseFormat(raw: unknown, target: ProviderFormat): ResponseFormat | undefined {
  if (!isObj(raw)) return undefined;
  if (raw.type === 'text' || raw.type === 'json_object') return { type: raw.type };
  if (raw.type === 'json_schema' && isObj(raw.json_schema)) {
    const js = raw.json_schema;
    return {
      type: 'json_schema',
      name: str(js.name, 'response'),
      schema: (js.schema ?? {}) as Obj,
      strict: js.strict === true,
    };
  }
  throw new UnsupportedFeatureError(`response_format ${String(raw.type)}`, target);
}

/** Chat Completions request → internal, for a provider of another format. */
export function parseOpenAiRequest(body: Obj, model: string, target: ProviderFormat): LlmRequest {
  for (const key of Object.keys(body))
    if (!TRANSLATED.has(key)) throw new UnsupportedFeatureError(key, target);
  if (body.n !== undefined && body.n !== 1) throw new UnsupportedFeatureError('n greater than 1', target);
  const tools = body.tools === undefined ? undefined : (body.tools as Obj[]);
  const req: LlmRequest = {
    model,
    ...messages(body.messages, target),
    tools: tools?.map((t, i) => {
      if (t.type !== 'function' || !isObj(t.function))
        throw new UnsupportedFeatureError(`tools[${i}] of type ${String(t.type)}`, target);
      const fn = t.function;
      const cc = toCacheControl(t.cache_control);
      return {
        name: String(fn.name),
        description: typeof fn.description === 'string' ? fn.description : undefined,
        parameters: (fn.parameters ?? { type: 'object', properties: {} }) as Obj,
        ...(cc && { cache_control: cc }),
      };
    }),
    tool_choice: toolChoice(body.tool_choice, target),
    parallel_tool_calls: typeof body.parallel_tool_calls === 'boolean' ? body.parallel_tool_calls : undefined,
    response_format: responseFormat(body.response_format, target),
    stop:
      typeof body.stop === 'string'
        ? [body.stop]
        : Array.isArray(body.stop)
          ? body.stop.map(String)
          : undefined,
    max_tokens: (body.max_completion_tokens ?? body.max_tokens) as number | undefined,
    temperature: body.temperature as number | undefined,
    top_p: body.top_p as number | undefined,
  };
  return req;
}
