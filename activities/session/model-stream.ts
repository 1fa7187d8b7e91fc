/**
 * One streamed model call: text deltas become run events as they arrive
 * (DeltaWriter), tool calls are assembled from their fragments, the span and
 * the virtual key are settled with what the call used.
 */
import { context as otelContext, trace } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import type { Db } from '../../core/db/knex.js';
import type { DbProvider } from '../../core/db/llm-config.tables.js';
import { openStream } from '../../core/llm/client.js';
import { UpstreamError } from '../../core/llm/errors.js';
import type { LlmRequest, LlmStreamEvent, ProviderTarget, ToolCall, Usage } from '../../core/llm/types.js';
import type { Admission } from '../../core/metering/gateway-policy.js';
import { costUsd } from '../../core/metering/pricing.js';
import { readStepTextEvents, type StepEvent } from '../../core/repositories/run-store.js';
import { DeltaWriter } from './delta-writer.js';
import { modelFailure } from './failures.js';
import { modelCallSpan, settle } from './metered-call.js';
import { heartbeating } from './turn-run.js';
import type { SessionDeps, TurnPlan } from './types.js';

export interface StreamCall {
  runId: string;
  step: number;
  plan: TurnPlan;
  provider: DbProvider;
  target: ProviderTarget;
  req: LlmRequest;
  admission: Admission | undefined;
}

export interface StreamedAnswer {
  text: string;
  toolCalls: ToolCall[];
  /** As the provider reported it (undefined when it did not). */
  usage: Usage | undefined;
  finish: string;
  /** Deltas readers have not been sent yet: they go out with the answer. */
  pendingDeltas: StepEvent[];
}

/** What the stream has delivered so far. */
interface Received {
  text: string;
  finish: string;
  usage: Usage | undefined;
  calls: Map<number, ToolCall>;
}

/** Text this step already streamed to readers in earlier attempts (since its last restart). */
async function priorText(db: Db, runId: string, step: number): Promise<string> {
  let text = '';
  for (const r of await readStepTextEvents(db, runId, step))
    text = r.type === 'message.restarted' ? '' : text + (r.data.text ?? '');
  return text;
}

function receive(got: Received, ev: LlmStreamEvent, writer: DeltaWriter): void {
  if (ev.type === 'text') {
    got.text += ev.text;
    writer.push(ev.text);
  } else if (ev.type === 'tool_call_start')
    got.calls.set(ev.index, { id: ev.id, name: ev.name, arguments: '' });
  else if (ev.type === 'tool_call_delta') {
    const call = got.calls.get(ev.index);
    if (call) call.arguments += ev.arguments;
  } else if (ev.type === 'usage') got.usage = ev.usage;
  else if (ev.type === 'finish') got.finish = ev.finish_reason;
}

/** Streams the answer; a failure settles the span and the key, and becomes the failure Temporal should see. */
export async function streamAnswer(deps: SessionDeps, call: StreamCall): Promise<StreamedAnswer> {
  const { runId, step, admission } = call;
  const span = modelCallSpan(call.plan, call.provider, call.req, true);
  const ctx = Context.current();
  const writer = new DeltaWriter(
    deps.db,
    runId,
    step,
    ctx.info.attempt > 1 ? await priorText(deps.db, runId, step) : '',
  );
  const stop = heartbeating();
  const got: Received = { text: '', finish: 'stop', usage: undefined, calls: new Map() };
  let pendingDeltas: StepEvent[];
  try {
    await otelContext.with(trace.setSpan(otelContext.active(), span.span), async () => {
      const events = await openStream(call.target, call.req, ctx.cancellationSignal);
      for await (const ev of events) receive(got, ev, writer);
    });
    pendingDeltas = await writer.finish();
  } catch (err) {
    stop();
    await writer.close().catch(() => undefined);
    span.fail(err, err instanceof UpstreamError ? String(err.status) : undefined);
    const status = err instanceof UpstreamError ? err.status || 502 : 500;
    await settle(
      deps,
      admission,
      { inputTokens: 0, outputTokens: 0, status },
      'settling a failed model call failed',
    );
    throw modelFailure(err);
  }
  stop();
  const toolCalls = [...got.calls.values()].map((c) => ({ ...c, arguments: c.arguments || '{}' }));
  const used = got.usage ?? { input_tokens: 0, output_tokens: 0 };
  span.end({
    inputTokens: used.input_tokens,
    outputTokens: used.output_tokens,
    finishReasons: [got.finish],
    ...(admission?.price ? { costUsd: costUsd(admission.price, used) } : {}),
    output: got.text,
  });
  const outcome = {
    inputTokens: used.input_tokens,
    outputTokens: used.output_tokens,
    cacheReadTokens: used.cache_read_tokens,
    cacheWriteTokens: used.cache_write_tokens,
    status: 200,
  };
  await settle(deps, admission, outcome, 'settling a model call failed');
  return { text: got.text, toolCalls, usage: got.usage, finish: got.finish, pendingDeltas };
}
