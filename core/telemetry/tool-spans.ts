import {
  context,
  propagation,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { ATTR, CONTENT_ATTR } from './attributes.js';
import { recordsContent } from './turn-context.js';

/**
 * Spans for the agent's tools: sandbox operations and MCP calls. Attribute
 * names are ours (`sandbox.*`, `mcp.*`) except the tool name, which is the
 * GenAI convention's `gen_ai.tool.name`.
 */
const defaultTracer = () => trace.getTracer('agent-server-tools');

/** Runs `fn` in a span; `fn` may add attributes through the span it gets; a throw marks it as an error. */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
  tracer: Tracer = defaultTracer(),
): Promise<T> {
  const span = tracer.startSpan(name, { attributes });
  try {
    return await context.with(trace.setSpan(context.active(), span), () => fn(span));
  } catch (err) {
    span.setAttribute('error.type', err instanceof Error ? err.name : 'error');
    if (err instanceof Error) span.recordException(err);
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw err;
  } finally {
    span.end();
  }
}

const asText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * A tool call's arguments and result on its span, when content recording is
 * on (`recordsContent`: OTEL_RECORD_CONTENT, else the turn's project), as the
 * GenAI conventions' opt-in `gen_ai.tool.call.arguments` / `.result`; the span
 * says whether they were recorded either way.
 */
export function recordToolContent(span: Span, args: unknown, result: unknown): void {
  const on = recordsContent();
  span.setAttribute(ATTR.contentRecorded, on);
  if (!on) return;
  if (args !== undefined) span.setAttribute(CONTENT_ATTR.toolArguments, asText(args));
  if (result !== undefined) span.setAttribute(CONTENT_ATTR.toolResult, asText(result));
}

/** `sandbox.ensure`: `created` says whether a new container/pod was started for the session. */
export function sandboxEnsureSpan<T extends { created: boolean }>(
  sessionId: string,
  fn: () => Promise<T>,
  tracer?: Tracer,
): Promise<T> {
  return inSpan(
    'sandbox.ensure',
    { 'sandbox.session.id': sessionId },
    async (span) => {
      const result = await fn();
      span.setAttribute('sandbox.created', result.created);
      return result;
    },
    tracer,
  );
}

/**
 * `sandbox.exec`: exit code, timed out, reused (a retry attached to an
 * earlier execution); the command text only as its length (it may hold
 * secrets), unless content recording is on, when the command and its result
 * are the tool call's arguments and result.
 */
export function sandboxExecSpan<
  T extends { exit_code: number | null; timed_out?: boolean; reused?: boolean },
>(sessionId: string, command: string, fn: () => Promise<T>, tracer?: Tracer): Promise<T> {
  return inSpan(
    'sandbox.exec',
    { 'sandbox.session.id': sessionId, 'sandbox.command.length': command.length },
    async (span) => {
      const result = await fn();
      if (result.exit_code !== null) span.setAttribute('sandbox.exit_code', result.exit_code);
      span.setAttribute('sandbox.timed_out', result.timed_out ?? false);
      // A retried call that attached to the first attempt's execution (the command did not run again).
      if (result.reused) span.setAttribute('sandbox.exec.reused', true);
      recordToolContent(span, command, result);
      return result;
    },
    tracer,
  );
}

/** `sandbox.file.<op>` for reads, writes and deletes. */
export function sandboxFileSpan<T>(
  sessionId: string,
  op: 'read' | 'write' | 'delete',
  path: string,
  fn: () => Promise<T>,
  tracer?: Tracer,
): Promise<T> {
  return inSpan(
    `sandbox.file.${op}`,
    { 'sandbox.session.id': sessionId, 'sandbox.file.path': path },
    fn,
    tracer,
  );
}

/** `mcp.tools.list` and `mcp.tools.call <tool>`. */
export function mcpSpan<T>(
  server: string,
  tool: string | undefined,
  fn: () => Promise<T>,
  tracer?: Tracer,
): Promise<T> {
  const attributes: Attributes = { 'mcp.server.name': server };
  if (tool) attributes['gen_ai.tool.name'] = tool;
  return inSpan(tool ? `mcp.tools.call ${tool}` : 'mcp.tools.list', attributes, () => fn(), tracer);
}

/** The W3C `traceparent` (and `tracestate`) of the current span, for a request to the sandbox daemon. */
export function traceHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  propagation.inject(context.active(), headers);
  return headers;
}
