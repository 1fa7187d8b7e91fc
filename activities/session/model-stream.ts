/**
 * One streamed model call: text deltas become run events as they arrive
 * (DeltaWriter), tool calls are assembled from their fragments, the span,
 * the usage log and the virtual key are settled with what the call used.
 */
import { context as otelContext } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import type { Db } from '../../core/db/knex.js';
import { openStream } from '../../core/llm/client.js';
import type { LlmRequest, LlmStreamEvent, ProviderTarget, ToolCall, Usage } from '../../core/llm/types.js';
import { RunEventsRepository, type StepEvent } from '../../core/repositories/run-events.repository.js';
import { DeltaWriter } from './delta-writer.js';
import { modelFailure } from './failures.js';
import type { SessionModelCall } from './metered-call.js';
import { heartbeating } from './turn-run.js';
import type { SessionDeps } from './types.js';

export interface StreamCall {
  runId: string;
  step: number;
  target: ProviderTarget;
  req: LlmRequest;
  /** Admitted against the project's key, its span open: settled here. */
  metered: SessionModelCall;
}

export interface StreamedAnswer {
  text: string;
  toolCalls: ToolCall[];
  /** As the provider reported it (undefined when it did not). */
  usage: Usage | undefined;
  /** What the call cost, as its span and usage row say (undefined when no price or no usage is known). */
  costUsd: number | undefined;
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
  for (const r of await new RunEventsRepository(db).stepText(runId, step))
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
  const { runId, step, metered } = call;
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
    await otelContext.with(metered.context(), async () => {
      const events = await openStream(call.target, call.req, ctx.cancellationSignal);
      for await (const ev of events) receive(got, ev, writer);
    });
    pendingDeltas = await writer.finish();
  } catch (err) {
    stop();
    await writer.close().catch(() => undefined);
    await metered.fail(err, 'settling a failed model call failed');
    throw modelFailure(err);
  }
  stop();
  const toolCalls = [...got.calls.values()].map((c) => ({ ...c, arguments: c.arguments || '{}' }));
  const costUsd = await metered.end(
    { usage: got.usage, finishReasons: [got.finish], output: got.text },
    'settling a model call failed',
  );
  return { text: got.text, toolCalls, usage: got.usage, costUsd, finish: got.finish, pendingDeltas };
}
