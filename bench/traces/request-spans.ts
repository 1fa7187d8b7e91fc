/** A gateway request's two spans (HTTP server, GenAI client) with the attributes our code sets, for bench/traces. */
import { randomBytes } from 'node:crypto';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { AnyReadableSpan } from '../../core/telemetry/span-row.js';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const PROJECT = '3f1c2b9e-1111-4a5b-9c8d-123456789abc';

export function fakeSpan(
  traceId: string,
  spanId: string,
  parent: string | undefined,
  name: string,
  kind: SpanKind,
  scope: string,
  attributes: Record<string, unknown>,
): AnyReadableSpan {
  const now = Date.now();
  const start: [number, number] = [Math.floor(now / 1000), (now % 1000) * 1e6 + 123_456];
  return {
    name,
    kind,
    spanContext: () => ({ traceId, spanId, traceFlags: 1 }),
    parentSpanContext: parent ? { traceId, spanId: parent, traceFlags: 1 } : undefined,
    startTime: start,
    endTime: [start[0], start[1] + 800_000],
    duration: [0, 800_000],
    status: { code: SpanStatusCode.UNSET },
    attributes,
    events: [],
    resource: { attributes: { 'service.name': 'agent-server-api' } },
    instrumentationScope: { name: scope },
  } as unknown as AnyReadableSpan;
}

/** A gateway request's two spans, as our middleware and genai.ts set them. */
export function requestSpans(): AnyReadableSpan[] {
  const traceId = hex(16);
  const server = hex(8);
  const path = '/api/gateway/openai/v1/chat/completions';
  return [
    fakeSpan(traceId, server, undefined, `POST ${path}`, SpanKind.SERVER, 'agent-server-http', {
      'http.request.method': 'POST',
      'url.path': path,
      'url.scheme': 'http',
      'network.protocol.version': '1.1',
      'user_agent.original': 'autocannon',
      'client.address': '127.0.0.1',
      'server.port': 3000,
      'http.route': path,
      'http.response.status_code': 200,
    }),
    fakeSpan(traceId, hex(8), server, 'chat gpt-4o-mini', SpanKind.CLIENT, 'agent-server-genai', {
      'gen_ai.operation.name': 'chat',
      'gen_ai.system': 'openai',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.request.max_tokens': 16,
      'agent_server.project.id': PROJECT,
      'agent_server.virtual_key.id': '9a1c2b9e-2222-4a5b-9c8d-123456789abc',
      'gen_ai.response.model': 'gpt-4o-mini',
      'gen_ai.response.id': `chatcmpl-${hex(8)}`,
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 16,
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.cost_usd': 0.0000123,
    }),
  ];
}
