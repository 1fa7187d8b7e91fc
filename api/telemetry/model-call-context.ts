import { propagation, trace, type Context, type Span } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';

/** The spans started by `startModelCallSpan` (genai.ts): each stands for one call to a vendor. */
const modelCallSpans = new WeakSet<Span>();

export function markModelCallSpan(span: Span): void {
  modelCallSpans.add(span);
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
  const span = trace.getSpan(active);
  if (!span || !modelCallSpans.has(span)) return active;
  propagation.inject(active, headers);
  return suppressTracing(active);
}
