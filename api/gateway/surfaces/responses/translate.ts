import { UnsupportedFeatureError } from '../../../../core/llm/errors.js';
import type {
  ContentPart,
  LlmMessage,
  LlmRequest,
  ProviderFormat,
  ResponseFormat,
  ToolChoice,
} from '../../../../core/llm/types.js';
import { parseDataUrl } from '../openai/request.js';
import type { Item, MessageItem } from './items.js';
import type { ResponsesRequest, TextFormat } from './request.js';

/**
 * A checked Responses request and its whole conversation → the internal
 * request every provider adapter takes (an OpenAI provider gets it as Chat
 * Completions). Instructions and system/developer messages become the system
 * prompt; consecutive function calls join the assistant turn before them,
 * and each function output becomes a tool result.
 */

function parts(m: MessageItem): ContentPart[] {
  return m.content.map((p): ContentPart => {
    if (p.type !== 'input_image') return { type: 'text', text: p.text };
    const data = parseDataUrl(p.image_url);
    return { type: 'image', source: data ? { kind: 'base64', ...data } : { kind: 'url', url: p.image_url } };
  });
}

const textOf = (m: MessageItem) => m.content.map((p) => (p.type === 'input_image' ? '' : p.text)).join('');

function conversation(items: Item[]): { system: string[]; messages: LlmMessage[] } {
  const system: string[] = [];
  const messages: LlmMessage[] = [];
  const names = new Map<string, string>();
  for (const it of items) {
    if (it.type === 'message') {
      if (it.role === 'system' || it.role === 'developer') system.push(textOf(it));
      else if (it.role === 'user') messages.push({ role: 'user', content: parts(it) });
      else messages.push({ role: 'assistant', content: parts(it), tool_calls: [] });
    } else if (it.type === 'function_call') {
      names.set(it.call_id, it.name);
      const last = messages[messages.length - 1];
      const call = { id: it.call_id, name: it.name, arguments: it.arguments };
      if (last?.role === 'assistant') (last.tool_calls ??= []).push(call);
      else messages.push({ role: 'assistant', content: [], tool_calls: [call] });
    } else {
      const name = names.get(it.call_id);
      messages.push({
        role: 'tool',
        tool_call_id: it.call_id,
        content: it.output,
        ...(name ? { name } : {}),
      });
    }
  }
  return { system, messages };
}

function responseFormat(f: TextFormat, target: ProviderFormat): ResponseFormat | undefined {
  if (f.type === 'text') return undefined;
  // Named by the Responses field (the adapter would name Chat Completions' response_format).
  if (target === 'anthropic') throw new UnsupportedFeatureError(`text.format ${f.type}`, target);
  if (f.type === 'json_object') return { type: 'json_object' };
  return {
    type: 'json_schema',
    name: f.name,
    schema: f.schema,
    ...(f.strict !== null ? { strict: f.strict } : {}),
  };
}

function toolChoice(req: ResponsesRequest): ToolChoice | undefined {
  // 'auto' is every vendor's default with tools, and Anthropic refuses a tool_choice without them.
  if (req.tools.length === 0 || req.tool_choice === 'auto') return undefined;
  const tc = req.tool_choice;
  return typeof tc === 'string' ? tc : { name: tc.name };
}

export function toLlmRequest(
  req: ResponsesRequest,
  items: Item[],
  model: string,
  target: ProviderFormat,
): LlmRequest {
  const { system, messages } = conversation(items);
  if (req.instructions) system.unshift(req.instructions);
  return {
    model,
    system: system.length ? system.join('\n\n') : undefined,
    messages,
    tools: req.tools.length
      ? req.tools.map((t) => ({
          name: t.name,
          ...(t.description !== null ? { description: t.description } : {}),
          parameters: t.parameters,
        }))
      : undefined,
    tool_choice: toolChoice(req),
    // true is every vendor's default; only a refusal of parallel calls is said.
    parallel_tool_calls: req.tools.length && !req.parallel_tool_calls ? false : undefined,
    response_format: responseFormat(req.text.format, target),
    max_tokens: req.max_output_tokens ?? undefined,
    temperature: req.temperature ?? undefined,
    top_p: req.top_p ?? undefined,
  };
}
