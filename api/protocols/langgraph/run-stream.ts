import type { RunEvent } from '../../../core/repositories/run-events.repository.js';
import {
  aiMessage,
  aiMessageId,
  asText,
  lcToolCalls,
  toolArtifact,
  toolMessage,
  toolMessageId,
  type LcMessage,
} from './messages.js';
import type { StreamMode } from './runs.schemas.js';
import type { Interrupt } from './threads.js';

/** One SSE event of the protocol's stream; `id` is `<run event seq>-<n>`, which Last-Event-ID resumes after. */
export interface Frame {
  id: string;
  event: string;
  data: unknown;
}

/** What rendering needs beyond the events: the run and thread, and their state read when it changed. */
export interface StreamContext {
  runId: string;
  threadId: string;
  assistantId: string;
  values: () => Promise<{ messages: LcMessage[] }>;
  interrupts: () => Promise<Interrupt[]>;
}

type Data = Record<string, unknown>;

/**
 * A run's events in the stream modes the client asked for, as LangGraph's
 * server sends them: `values` (the thread's state after each change),
 * `updates` (what each node wrote), `messages-tuple` (token chunks as
 * `[chunk, metadata]` under the event name `messages`) and the older
 * `messages` (`messages/metadata`, then `messages/partial` with the answer
 * so far, `messages/complete`), and `events` (LangChain's streamed events:
 * model tokens and answers, tool starts and ends). Chunks and stored
 * messages share ids.
 */
export class RunStreamRenderer {
  private readonly text = new Map<number, string>();
  private readonly announced = new Set<string>();

  constructor(
    private readonly modes: ReadonlySet<StreamMode>,
    private readonly ctx: StreamContext,
  ) {}

  /** The first frames: the run's metadata, then its state as it starts. */
  async start(): Promise<Frame[]> {
    const frames: Frame[] = [{ id: '0-0', event: 'metadata', data: { run_id: this.ctx.runId, attempt: 1 } }];
    if (this.modes.has('values')) frames.push({ id: '0-1', event: 'values', data: await this.ctx.values() });
    return frames;
  }

  async render(ev: RunEvent): Promise<Frame[]> {
    const out: Array<Omit<Frame, 'id'>> = [];
    const d = ev.data as Data;
    switch (ev.type) {
      case 'message.delta':
        this.delta(Number(d.step), asText(d.text), out);
        break;
      case 'message.restarted':
        this.text.set(Number(d.step), '');
        break;
      case 'message.completed':
        await this.answer(d, out);
        break;
      case 'tool_call.started':
        this.event('on_tool_start', asText(d.name), Number(d.step), 'tools', { input: {} }, out);
        break;
      case 'tool_call.completed':
        await this.toolResult(d, out);
        break;
      case 'run.paused':
        await this.paused(out);
        break;
      case 'run.failed': {
        const error = (d.error ?? {}) as Data;
        out.push({
          event: 'error',
          data: { error: error.code ?? 'error', message: error.message ?? 'the run failed' },
        });
        break;
      }
      default:
        break;
    }
    return out.map((f, n) => ({ id: `${ev.seq}-${n}`, ...f }));
  }

  private meta(step: number, node: string): Data {
    return {
      langgraph_node: node,
      langgraph_step: step,
      langgraph_triggers: [`branch:to:${node}`],
      run_id: this.ctx.runId,
      thread_id: this.ctx.threadId,
      assistant_id: this.ctx.assistantId,
    };
  }

  private chunk(id: string, content: string, toolCalls: ReturnType<typeof lcToolCalls> = []): Data {
    return {
      type: 'AIMessageChunk',
      id,
      content,
      additional_kwargs: {},
      response_metadata: {},
      tool_calls: toolCalls,
      invalid_tool_calls: [],
      tool_call_chunks: toolCalls.map((c, index) => ({
        name: c.name,
        args: JSON.stringify(c.args),
        id: c.id,
        index,
        type: 'tool_call_chunk',
      })),
    };
  }

  private announce(id: string, meta: Data, out: Array<Omit<Frame, 'id'>>): void {
    if (!this.modes.has('messages') || this.announced.has(id)) return;
    this.announced.add(id);
    out.push({ event: 'messages/metadata', data: { [id]: { metadata: meta } } });
  }

  private delta(step: number, text: string, out: Array<Omit<Frame, 'id'>>): void {
    const id = aiMessageId(this.ctx.runId, step);
    const sofar = (this.text.get(step) ?? '') + text;
    this.text.set(step, sofar);
    if (this.modes.has('messages-tuple'))
      out.push({ event: 'messages', data: [this.chunk(id, text), this.meta(step, 'agent')] });
    this.announce(id, this.meta(step, 'agent'), out);
    if (this.modes.has('messages')) out.push({ event: 'messages/partial', data: [aiMessage(id, sofar, [])] });
    this.event('on_chat_model_stream', 'model', step, 'agent', { chunk: this.chunk(id, text) }, out);
  }

  /** The `events` mode: LangChain's streamed events (v2) for the model's tokens and answers and the tools. */
  private event(
    name: string,
    runName: string,
    step: number,
    node: string,
    data: Data,
    out: Array<Omit<Frame, 'id'>>,
  ) {
    if (!this.modes.has('events')) return;
    out.push({
      event: 'events',
      data: {
        event: name,
        name: runName,
        run_id: this.ctx.runId,
        tags: [],
        metadata: this.meta(step, node),
        data,
      },
    });
  }

  private async answer(d: Data, out: Array<Omit<Frame, 'id'>>): Promise<void> {
    const step = Number(d.step);
    const id = aiMessageId(this.ctx.runId, step);
    const calls = lcToolCalls(d.tool_calls);
    const message = aiMessage(id, d.content ?? '', calls);
    // What was not streamed as text (tool calls, or a whole answer) goes out as the last chunk.
    const streamed = this.text.get(step) ?? '';
    const rest = asText(d.content).startsWith(streamed) ? asText(d.content).slice(streamed.length) : '';
    if (this.modes.has('messages-tuple') && (rest || calls.length))
      out.push({ event: 'messages', data: [this.chunk(id, rest, calls), this.meta(step, 'agent')] });
    this.announce(id, this.meta(step, 'agent'), out);
    if (this.modes.has('messages')) out.push({ event: 'messages/complete', data: [message] });
    this.event('on_chat_model_end', 'model', step, 'agent', { output: message }, out);
    if (this.modes.has('updates')) out.push({ event: 'updates', data: { agent: { messages: [message] } } });
    if (this.modes.has('values')) out.push({ event: 'values', data: await this.ctx.values() });
  }

  private async toolResult(d: Data, out: Array<Omit<Frame, 'id'>>): Promise<void> {
    const callId = asText(d.id);
    const id = toolMessageId(this.ctx.runId, callId);
    const message = toolMessage(id, callId, asText(d.name), d.output, Boolean(d.is_error), toolArtifact(d));
    const meta = this.meta(Number(d.step), 'tools');
    if (this.modes.has('messages-tuple')) out.push({ event: 'messages', data: [message, meta] });
    this.announce(id, meta, out);
    if (this.modes.has('messages')) out.push({ event: 'messages/complete', data: [message] });
    this.event('on_tool_end', asText(d.name), Number(d.step), 'tools', { output: message }, out);
    if (this.modes.has('updates')) out.push({ event: 'updates', data: { tools: { messages: [message] } } });
    if (this.modes.has('values')) out.push({ event: 'values', data: await this.ctx.values() });
  }

  private async paused(out: Array<Omit<Frame, 'id'>>): Promise<void> {
    const interrupts = await this.ctx.interrupts();
    if (this.modes.has('updates')) out.push({ event: 'updates', data: { __interrupt__: interrupts } });
    if (this.modes.has('values'))
      out.push({ event: 'values', data: { ...(await this.ctx.values()), __interrupt__: interrupts } });
  }
}

/** `Last-Event-ID` as `[seq, n]` (`-1` or nothing: from the start). */
export function parseEventId(header: string | undefined): [number, number] | undefined {
  if (!header || header === '-1') return undefined;
  const m = /^(\d{1,12})-(\d{1,6})$/.exec(header.trim());
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}
