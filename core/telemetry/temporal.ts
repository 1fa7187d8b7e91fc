import {
  OpenTelemetryPlugin,
  OpenTelemetryWorkflowClientInterceptor,
  type OpenTelemetryPluginOptions,
} from '@temporalio/interceptors-opentelemetry';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { Telemetry } from './telemetry.js';

/**
 * Client side: starting a workflow, an update or a signal opens a CLIENT span
 * and carries the context to the workflow in Temporal headers. It uses the
 * global tracer, so with tracing off it costs nothing.
 */
export function temporalClientInterceptors(): { workflow: WorkflowClientInterceptor[] } {
  return { workflow: [new OpenTelemetryWorkflowClientInterceptor()] };
}

/**
 * Worker side: workflow spans (run, update, signal, scheduling an activity)
 * made in the sandbox reach our exporters through the plugin's sink, with the
 * worker's resource; activity spans use the worker's tracer, so queries and
 * HTTP calls inside an activity are the worker's too.
 */
export function temporalWorkerPlugin(telemetry: Telemetry): OpenTelemetryPlugin {
  // The plugin is typed against OpenTelemetry JS 1.x; our 3.x resource and processor have the members it uses.
  const options = {
    resource: telemetry.resource('worker'),
    spanProcessor: telemetry.spanProcessor,
    tracer: telemetry.tracer('worker', '@temporalio/interceptors-opentelemetry'),
  } as unknown as OpenTelemetryPluginOptions;
  return new OpenTelemetryPlugin(options);
}
