import {
  context,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { ATTR, CONTENT_ATTR } from './attributes.js';
import { markModelCallSpan } from './model-call-context.js';
import { recordsContent } from './turn-context.js';

/**
 * Spans for model calls, following the OpenTelemetry GenAI conventions. Used
 * by the gateway (one per upstream request) and by agent turns (one per model
 * call); stats/models counts CLIENT spans carrying `gen_ai.request.model`, so
 * make exactly one per call to a vendor.
 */
export interface ModelCallStart {
  /** `openai`, `anthropic`, `gemini`… (gen_ai.system / gen_ai.provider.name). */
  system: string;
  model: string;
  /** gen_ai.operation.name: `chat` unless embeddings, completions… */
  operation?: string;
  projectId?: string;
  agentId?: string;
  conversationId?: string;
  virtualKeyId?: string;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stream?: boolean;
  /** Prompt messages; recorded only when content recording is on (`recordsContent`). */
  input?: unknown;
}

export interface ModelCallEnd {
  responseModel?: string;
  responseId?: string;
  inputTokens?: number;
  outputTokens?: number;
  finishReasons?: string[];
  /** US dollars, when the caller knows the price. */
  costUsd?: number;
  /** Completion; recorded only when content recording is on. */
  output?: unknown;
}

export interface GenAiOptions {
  tracer?: Tracer;
  /** Defaults to `recordsContent()`: OTEL_RECORD_CONTENT, else the turn's project's `record_content`. */
  recordContent?: boolean;
}

function content(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A started model-call span: call `end` with what the vendor answered, or `fail`. */
export class ModelCallSpan {
  private done = false;

  constructor(
    readonly span: Span,
    private readonly recordContent: boolean,
  ) {}

  end(result: ModelCallEnd = {}): void {
    if (this.done) return;
    this.done = true;
    const a: Attributes = {};
    if (result.responseModel) a['gen_ai.response.model'] = result.responseModel;
    if (result.responseId) a['gen_ai.response.id'] = result.responseId;
    if (result.inputTokens !== undefined) a['gen_ai.usage.input_tokens'] = result.inputTokens;
    if (result.outputTokens !== undefined) a['gen_ai.usage.output_tokens'] = result.outputTokens;
    if (result.finishReasons) a['gen_ai.response.finish_reasons'] = result.finishReasons;
    if (result.costUsd !== undefined) a[ATTR.costUsd] = result.costUsd;
    if (this.recordContent && result.output !== undefined) a[CONTENT_ATTR.output] = content(result.output);
    this.span.setAttributes(a);
    this.span.end();
  }

  /** `errorType`: the vendor's error code or HTTP status, as `error.type`. */
  fail(err: unknown, errorType?: string, partial: ModelCallEnd = {}): void {
    if (this.done) return;
    this.span.setAttribute('error.type', errorType ?? (err instanceof Error ? err.name : 'error'));
    if (err instanceof Error) this.span.recordException(err);
    this.span.setStatus({ code: SpanStatusCode.ERROR });
    this.end(partial);
  }
}

export function startModelCallSpan(start: ModelCallStart, options: GenAiOptions = {}): ModelCallSpan {
  const tracer = options.tracer ?? trace.getTracer('agent-server-genai');
  const recordContent = options.recordContent ?? recordsContent();
  const operation = start.operation ?? 'chat';
  const a: Attributes = {
    'gen_ai.operation.name': operation,
    'gen_ai.system': start.system,
    'gen_ai.provider.name': start.system,
    'gen_ai.request.model': start.model,
  };
  if (start.maxTokens !== undefined) a['gen_ai.request.max_tokens'] = start.maxTokens;
  if (start.temperature !== undefined) a['gen_ai.request.temperature'] = start.temperature;
  if (start.topP !== undefined) a['gen_ai.request.top_p'] = start.topP;
  if (start.stream !== undefined) a['gen_ai.request.stream'] = start.stream;
  if (start.projectId) a[ATTR.projectId] = start.projectId;
  if (start.agentId) a[ATTR.agentId] = start.agentId;
  if (start.conversationId) a[ATTR.conversationId] = start.conversationId;
  if (start.virtualKeyId) a[ATTR.virtualKeyId] = start.virtualKeyId;
  // The span says whether content was recorded, so "none" is never mistaken for "empty".
  a[ATTR.contentRecorded] = recordContent;
  if (recordContent && start.input !== undefined) a[CONTENT_ATTR.input] = content(start.input);
  // Set after the start: the SDK would validate start attributes twice (see api/middleware/tracing.ts).
  const span = tracer.startSpan(`${operation} ${start.model}`, { kind: SpanKind.CLIENT }).setAttributes(a);
  markModelCallSpan(span);
  return new ModelCallSpan(span, recordContent);
}

/**
 * Runs `fn` inside a model-call span (so HTTP calls it makes are children).
 * `fn` returns the value and what to record; a throw marks the span as an error.
 */
export async function withModelCallSpan<T>(
  start: ModelCallStart,
  fn: (span: ModelCallSpan) => Promise<{ value: T; end: ModelCallEnd }>,
  options: GenAiOptions = {},
): Promise<T> {
  const call = startModelCallSpan(start, options);
  try {
    const { value, end } = await context.with(trace.setSpan(context.active(), call.span), () => fn(call));
    call.end(end);
    return value;
  } catch (err) {
    call.fail(err);
    throw err;
  }
}
