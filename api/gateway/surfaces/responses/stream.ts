import type { LlmStreamEvent } from '../../../../core/llm/types.js';
import type { GatewayError } from '../../errors.js';
import { sse, type StreamRenderer } from '../../surface.js';
import { newId, outputMessage, type FunctionCallItem, type MessageItem } from './items.js';
import {
  completedAt,
  itemStatus,
  responseObject,
  statusOf,
  usageOf,
  type Answer,
  type ResponseShell,
  type ResponseStatus,
} from './render.js';

/** An output item being streamed; `done` once its closing events are out. */
type Open = { item: MessageItem; text: string; done: boolean } | { item: FunctionCallItem; done: boolean };

/**
 * Internal stream events → the Responses API's typed events, each with its
 * `sequence_number`: `response.created` and `response.in_progress` first;
 * text as a message item (`output_item.added`, `content_part.added`,
 * `output_text.delta`…, closed by `output_text.done`, `content_part.done`,
 * `output_item.done`); each tool call as a function_call item with its
 * `function_call_arguments.delta`s and `.done`; `response.completed` (or
 * `response.incomplete` when cut off) last, with the output and usage. A
 * break after the start is `response.failed` and then an `error` event, so
 * an SDK both sees the failed response and throws.
 * `onAnswer` gets the final state, for storing it.
 */
export function createResponsesStreamRenderer(
  shell: ResponseShell,
  askedModel: string,
  onAnswer: (answer: Answer) => void,
): StreamRenderer {
  let seq = 0;
  let started = false;
  let model = askedModel;
  const open: Open[] = [];
  let message: number | undefined;
  const calls = new Map<number, number>();
  let ending: Pick<Answer, 'status' | 'incomplete_details'> = {
    status: 'completed',
    incomplete_details: null,
  };
  let usage: Answer['usage'] = null;

  const emit = (type: string, fields: Record<string, unknown>) =>
    sse({ type, sequence_number: seq++, ...fields }, type);
  // An item still streaming shows its text so far (a failed response's partial output).
  const current = (o: Open) =>
    !o.done && 'text' in o ? outputMessage(o.item.id, o.text, 'incomplete') : o.item;
  const snapshot = (status: ResponseStatus, error: Answer['error'] = null): Answer => ({
    status,
    model,
    output: open.map(current),
    usage,
    incomplete_details: status === 'incomplete' ? ending.incomplete_details : null,
    error,
    completed_at: completedAt(status),
  });
  const start = () => {
    if (started) return '';
    started = true;
    const response = responseObject(shell, { ...snapshot('in_progress'), output: [] });
    return emit('response.created', { response }) + emit('response.in_progress', { response });
  };

  function close(index: number): string {
    const o = open[index]!;
    if (o.done) return '';
    o.done = true;
    const status = itemStatus(ending.status);
    let out = '';
    if (o.item.type === 'message') {
      const text = 'text' in o ? o.text : '';
      o.item = outputMessage(o.item.id, text, status);
      const at = { item_id: o.item.id, output_index: index, content_index: 0 };
      out += emit('response.output_text.done', { ...at, text, logprobs: [] });
      out += emit('response.content_part.done', { ...at, part: o.item.content[0] });
    } else {
      o.item = { ...o.item, status };
      out += emit('response.function_call_arguments.done', {
        item_id: o.item.id,
        output_index: index,
        name: o.item.name,
        arguments: o.item.arguments,
      });
    }
    return out + emit('response.output_item.done', { output_index: index, item: o.item });
  }

  const closeAll = () => open.map((_, i) => close(i)).join('');

  function text(delta: string): string {
    let out = '';
    if (message === undefined) {
      message = open.length;
      const item = { ...outputMessage(newId('msg'), '', 'in_progress'), content: [] };
      open.push({ item, text: '', done: false });
      const at = { item_id: item.id, output_index: message };
      out += emit('response.output_item.added', { output_index: message, item });
      out += emit('response.content_part.added', {
        ...at,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
      });
    }
    const o = open[message]! as Extract<Open, { text: string }>;
    o.text += delta;
    return (
      out +
      emit('response.output_text.delta', {
        item_id: o.item.id,
        output_index: message,
        content_index: 0,
        delta,
        logprobs: [],
      })
    );
  }

  function callStart(ev: Extract<LlmStreamEvent, { type: 'tool_call_start' }>): string {
    // The text before a call is finished; text after it starts a new message.
    let out = message === undefined ? '' : close(message);
    message = undefined;
    const item: FunctionCallItem = {
      id: newId('fc'),
      type: 'function_call',
      call_id: ev.id,
      name: ev.name,
      arguments: '',
      status: 'in_progress',
    };
    calls.set(ev.index, open.length);
    open.push({ item, done: false });
    out += emit('response.output_item.added', { output_index: open.length - 1, item });
    return out;
  }

  function callDelta(ev: Extract<LlmStreamEvent, { type: 'tool_call_delta' }>): string {
    const index = calls.get(ev.index);
    const o = index === undefined ? undefined : open[index];
    if (!o || o.item.type !== 'function_call' || ev.arguments === '') return '';
    o.item = { ...o.item, arguments: o.item.arguments + ev.arguments };
    return emit('response.function_call_arguments.delta', {
      item_id: o.item.id,
      output_index: index,
      delta: ev.arguments,
    });
  }

  return {
    event(ev: LlmStreamEvent): string {
      if (ev.type === 'start' && ev.model) model = ev.model;
      const out = start();
      switch (ev.type) {
        case 'start':
          return out;
        case 'text':
          return ev.text ? out + text(ev.text) : out;
        case 'tool_call_start':
          return out + callStart(ev);
        case 'tool_call_delta':
          return out + callDelta(ev);
        case 'finish':
          ending = statusOf(ev.finish_reason);
          return out + closeAll();
        case 'usage':
          usage = usageOf(ev.usage);
          return out;
      }
    },
    end(): string {
      const out = start() + closeAll();
      const answer = snapshot(ending.status);
      onAnswer(answer);
      const type = answer.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
      return out + emit(type, { response: responseObject(shell, answer) });
    },
    error(err: GatewayError): string {
      const code = err.kind === 'rate_limit' ? 'rate_limit_exceeded' : 'server_error';
      const failed = started
        ? emit('response.failed', {
            response: responseObject(shell, snapshot('failed', { code, message: err.message })),
          })
        : '';
      return failed + emit('error', { code, message: err.message, param: err.param ?? null });
    },
  };
}
