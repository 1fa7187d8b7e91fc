import type { StreamParser } from '../../adapter.js';
import { UpstreamError } from '../../errors.js';
import type { FinishReason, LlmResponse, LlmStreamEvent, ToolCall, Usage } from '../../types.js';
import { usageWithCache } from '../../usage.js';

interface AnthropicBlock {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
}
/** Anthropic's `input_tokens` excludes the two cache counts; stream deltas may repeat any of them (cumulative). */
interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}
interface AnthropicMessage {
  id?: string;
  model?: string;
  content?: AnthropicBlock[];
  stop_reason?: string | null;
  usage?: AnthropicUsage;
}

/** Anthropic's counts → ours, where input counts every prompt token (see Usage). */
function usageOf(u: AnthropicUsage | undefined): Usage {
  const read = u?.cache_read_input_tokens ?? 0;
  const write = u?.cache_creation_input_tokens ?? 0;
  return usageWithCache((u?.input_tokens ?? 0) + read + write, u?.output_tokens ?? 0, read, write);
}

export function finishFromAnthropic(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'max_tokens':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/** Message → internal. */
export function fromAnthropicResponse(raw: unknown, model: string): LlmResponse {
  const body = raw as AnthropicMessage;
  const blocks = body.content ?? [];
  const tool_calls: ToolCall[] = blocks
    .filter((b) => b.type === 'tool_use')
    .map((b) => ({ id: b.id ?? '', name: b.name ?? '', arguments: JSON.stringify(b.input ?? {}) }));
  return {
    id: body.id ?? '',
    model: body.model ?? model,
    text: blocks
      .filter((b) => b.type === 'text')
      .map((b) => b.text ?? '')
      .join(''),
    tool_calls,
    finish_reason: finishFromAnthropic(body.stop_reason),
    usage: usageOf(body.usage),
  };
}

interface AnthropicEvent {
  type: string;
  index?: number;
  message?: AnthropicMessage;
  content_block?: AnthropicBlock;
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
}

/** Messages stream events → internal events. Tool calls are numbered among tool blocks only. */
export function createAnthropicStreamParser(providerName: string, model: string): StreamParser {
  const toolIndexByBlock = new Map<number, number>();
  // message_start carries the input counts; message_delta the output and, lately, the input counts again.
  let started: AnthropicUsage = {};
  return ({ data }) => {
    const ev = JSON.parse(data) as AnthropicEvent;
    const out: LlmStreamEvent[] = [];
    switch (ev.type) {
      case 'message_start':
        started = ev.message?.usage ?? {};
        out.push({ type: 'start', id: ev.message?.id ?? '', model: ev.message?.model ?? model });
        break;
      case 'content_block_start': {
        const block = ev.content_block;
        if (block?.type === 'tool_use') {
          const index = toolIndexByBlock.size;
          toolIndexByBlock.set(ev.index ?? 0, index);
          out.push({ type: 'tool_call_start', index, id: block.id ?? '', name: block.name ?? '' });
        } else if (block?.type === 'text' && block.text) out.push({ type: 'text', text: block.text });
        break;
      }
      case 'content_block_delta':
        if (ev.delta?.type === 'text_delta' && ev.delta.text) out.push({ type: 'text', text: ev.delta.text });
        else if (ev.delta?.type === 'input_json_delta' && ev.delta.partial_json) {
          const index = toolIndexByBlock.get(ev.index ?? 0) ?? 0;
          out.push({ type: 'tool_call_delta', index, arguments: ev.delta.partial_json });
        }
        break;
      case 'message_delta':
        out.push({ type: 'finish', finish_reason: finishFromAnthropic(ev.delta?.stop_reason) });
        out.push({
          type: 'usage',
          usage: usageOf({
            input_tokens: ev.usage?.input_tokens ?? started.input_tokens,
            output_tokens: ev.usage?.output_tokens ?? 0,
            cache_read_input_tokens: ev.usage?.cache_read_input_tokens ?? started.cache_read_input_tokens,
            cache_creation_input_tokens:
              ev.usage?.cache_creation_input_tokens ?? started.cache_creation_input_tokens,
          }),
        });
        break;
      case 'error':
        throw new UpstreamError(502, `${providerName}: ${ev.error?.message ?? 'stream error'}`, false);
    }
    return out;
  };
}
