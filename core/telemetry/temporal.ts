import { context, trace, type Attributes } from '@opentelemetry/api';
import type { Context as ActivityContext } from '@temporalio/activity';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import {
  OpenTelemetryPlugin,
  OpenTelemetryWorkflowClientInterceptor,
  type OpenTelemetryPluginOptions,
} from '@temporalio/interceptors-opentelemetry';
import type { ActivityInterceptorsFactory, WorkerOptions } from '@temporalio/worker';
import type { Telemetry } from './telemetry.js';
import { turnAttributesOf, withInheritedAttributes, withTurn, type TurnScope } from './turn-context.js';

/**
 * Starting a session's turn (update-with-start, as converse does): the
 * session's search attributes name its project, agent and conversation; the
 * request's span says so, and so does every span started for the turn here
 * (the Update's client span first), so the trace list's filters find the
 * turn even when it never reaches a worker.
 */
const turnOfStart: WorkflowClientInterceptor = {
  async startUpdateWithStart(input, next) {
    const turn: Attributes | undefined = turnAttributesOf(input.workflowStartOptions.typedSearchAttributes);
    if (!turn) return next(input);
    trace.getActiveSpan()?.setAttributes(turn);
    return context.with(withInheritedAttributes(context.active(), turn), () => next(input));
  },
};

/**
 * Client side: starting a workflow, an update or a signal opens a CLIENT span
 * and carries the context to the workflow in Temporal headers. It uses the
 * global tracer, so with tracing off it costs nothing.
 */
export function temporalClientInterceptors(): { workflow: WorkflowClientInterceptor[] } {
  // First: the outermost, so Temporal's client span starts in the turn's context.
  return { workflow: [turnOfStart, new OpenTelemetryWorkflowClientInterceptor()] };
}

/** What an activity is, for finding the turn it works for. */
export interface ActivityCall {
  workflowType: string | undefined;
  workflowId: string | undefined;
  activityType: string;
  args: readonly unknown[];
}

/** The turn an activity works for, or undefined (not a turn's activity, or the turn is gone). */
export type TurnOfActivity = (call: ActivityCall) => Promise<TurnScope | undefined>;

/**
 * Runs each activity in its turn's context (turn-context.ts), outside
 * Temporal's own activity interceptor: the activity's span, and every span
 * started inside it (queries, model calls, tools, sandbox and MCP requests),
 * carries the turn's project, agent and conversation, and content is recorded
 * as the project says. A failed lookup only costs the attributes.
 */
function turnInterceptor(turnOf: TurnOfActivity): ActivityInterceptorsFactory {
  return (ctx: ActivityContext) => ({
    inbound: {
      async execute(input, next) {
        const { info } = ctx;
        const turn = await turnOf({
          workflowType: info.workflowType,
          workflowId: info.workflowExecution?.workflowId,
          activityType: info.activityType,
          args: input.args,
        }).catch(() => undefined);
        if (!turn) return next(input);
        return context.with(withTurn(context.active(), turn), () => next(input));
      },
    },
  });
}

/** Temporal's plugin, with the turn's context around each activity when `turnOf` is given. */
class WorkerTracingPlugin extends OpenTelemetryPlugin {
  constructor(
    options: OpenTelemetryPluginOptions,
    private readonly turnOf: TurnOfActivity | undefined,
  ) {
    super(options);
  }

  override configureWorker(options: WorkerOptions): WorkerOptions {
    const configured = super.configureWorker(options);
    if (!this.turnOf) return configured;
    const interceptors = configured.interceptors ?? {};
    // First: the outermost, so Temporal's activity span starts in the turn's context too.
    return {
      ...configured,
      interceptors: {
        ...interceptors,
        activity: [turnInterceptor(this.turnOf), ...(interceptors.activity ?? [])],
      },
    };
  }
}

/**
 * Worker side: workflow spans (run, update, signal, scheduling an activity)
 * made in the sandbox reach our exporters through the plugin's sink, with the
 * worker's resource; activity spans use the worker's tracer, so queries and
 * HTTP calls inside an activity are the worker's too.
 */
export function temporalWorkerPlugin(telemetry: Telemetry, turnOf?: TurnOfActivity): OpenTelemetryPlugin {
  // The plugin is typed against OpenTelemetry JS 1.x; our 3.x resource and processor have the members it uses.
  const options = {
    resource: telemetry.resource('worker'),
    spanProcessor: telemetry.spanProcessor,
    tracer: telemetry.tracer('worker', '@temporalio/interceptors-opentelemetry'),
  } as unknown as OpenTelemetryPluginOptions;
  return new WorkerTracingPlugin(options, turnOf);
}
