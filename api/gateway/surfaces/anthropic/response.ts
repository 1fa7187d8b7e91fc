import type { FinishReason, LlmResponse, LlmStreamEvent, Usage } from '../../../../core/llm/types.js';
import { uncachedInputTokens } from '../../../../core/llm/usage.js';
import type { GatewayError } from '../../errors.js';
import { sse, type StreamRenderer } from '../../surface.js';
import { anthropicErrorBody } from './errors.js';
import { str, toolArguments } from '../json.js';

const STOP: Record<FinishReason, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  content_filter: 'refusal',
  error: 'end_turn',
};

/** Anthropic counts cache reads and writes apart from `input_tokens`, which is the uncached rest. */
const usageOf = (u: Usage) => ({
  input_tokens: uncachedInputTokens(u),
  output_tokens: u.output_tokens,
  cache_creation_input_tokens: u.cache_write_tokens ?? 0,
  cache_read_input_tokens: u.cache_read_tokens ?? 0,
});

const messageId = (id: string) => (id.startsWith('msg_') ? id : `msg_${id}`);

export function renderAnthropicResponse(res: LlmResponse): unknown {
  return {
    id: messageId(res.id),
    type: 'message',
    role: 'assistant',
    model: res.model,
    content: [
      ...(res.text ? [{ type: 'text', text: res.text }] : []),
      ...res.tool_calls.map((c) => ({
        type: 'tool_use',
        id: c.id,
        name: c.name,
        input: toolArguments(c.arguments),
      })),
    ],
    stop_reason: STOP[res.finish_reason],
    stop_sequence: null,
    usage: usageOf(res.usage),
  };
}

/**
 * message_start … content blocks … message_delta, message_stop. The stop
 * reason and usage wait for the end because OpenAI sends usage after its
 * finish chunk.
 */
export function createAnthropicStreamRenderer(body: Record<string, unknown>): StreamRenderer {
  let started = false;
  let open: number | undefined;
  let next = 0;
  let stop = 'end_turn';
  let usage: Usage = { input_tokens: 0, output_tokens: 0 };
  const blockOfTool = new Map<number, number>();
  const ev = (type: string, data: Record<string, unknown>) => sse({ type, ...data }, type);
  const start = (id: string, model: string) => {
    started = true;
    return ev('message_start', {
      message: {
        id: messageId(id),
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: usageOf({ input_tokens: 0, output_tokens: 0 }),
      },
    });
  };
  const ensureStarted = () => (started ? '' : start('gateway', str(body.model)));
  const close = () => {
    if (open === undefined) return '';
    const out = ev('content_block_stop', { index: open });
    open = undefined;
    return out;
  };
  let textOpen = false;
  return {
    event(e: LlmStreamEvent): string {
      switch (e.type) {
        case 'start':
          return started ? '' : start(e.id, e.model);
        case 'text': {
          let out = ensureStarted();
          if (!textOpen || open === undefined) {
            out += close();
            open = next++;
            textOpen = true;
            out += ev('content_block_start', { index: open, content_block: { type: 'text', text: '' } });
          }
          return (
            out + ev('content_block_delta', { index: open, delta: { type: 'text_delta', text: e.text } })
          );
        }
        case 'tool_call_start': {
          let out = ensureStarted() + close();
          open = next++;
          textOpen = false;
          blockOfTool.set(e.index, open);
          out += ev('content_block_start', {
            index: open,
            content_block: { type: 'tool_use', id: e.id, name: e.name, input: {} },
          });
          return out;
        }
        case 'tool_call_delta':
          return ev('content_block_delta', {
            index: blockOfTool.get(e.index) ?? open ?? 0,
            delta: { type: 'input_json_delta', partial_json: e.arguments },
          });
        case 'finish':
          stop = STOP[e.finish_reason];
          return '';
        case 'usage':
          usage = e.usage;
          return '';
      }
    },
    end: () =>
      ensureStarted() +
      close() +
      ev('message_delta', {
        delta: { stop_reason: stop, stop_sequence: null },
        usage: usageOf(usage),
      }) +
      ev('message_stop', {}),
    error: (err: GatewayError) => sse(anthropicErrorBody(err), 'error'),
  };
}
