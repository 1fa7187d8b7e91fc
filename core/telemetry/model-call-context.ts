import { propagation, trace, type Context, type Span } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';

/**
 * Marks the spans started by `startModelCallSpan` (genai.ts): each stands for
 * one call to a vendor. A property rather than a WeakSet, whose entries cost
 * the garbage collector on every call.
 */
const MODEL_CALL = Symbol('agent-server.model-call-span');
type Marked = Span & { [MODEL_CALL]?: true };

export function markModelCallSpan(span: Marked): void {
  span[MODEL_CALL] = true;
}

/**
 * The context to send a vendor request in. Inside a model-call span the HTTP
 * client's own CLIENT span (undici/http instrumentation) would be a second
 * span for the same call, so tracing is suppressed for the request and the
 * model-call span is propagated as its `traceparent` instead (injected here,
 * before suppression: a suppressed context injects nothing). Elsewhere the
 * instrumentation traces the request as usual.
 */
export function vendorRequestContext(active: Context, headers: Record<string, string>): Context {
  const span: Marked | undefined = trace.getSpan(active);
  if (span?.[MODEL_CALL] !== true) return active;
  propagation.inject(active, headers);
  return suppressTracing(active);
}
