import { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { redactSpan } from '../../../core/telemetry/span-redaction.js';
import { toSpanRow } from '../../../core/telemetry/span-row.js';

function finishedSpan(build: (span: Span) => void) {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const span = provider.getTracer('t').startSpan('GET', { kind: SpanKind.CLIENT });
  build(span);
  span.end();
  return exporter.getFinishedSpans()[0]!;
}

describe('redactSpan', () => {
  it('redacts credentials in attributes, events and the status message before a span is stored', () => {
    const span = finishedSpan((s) => {
      s.setAttributes({
        'url.full': 'https://u:pw@mcp.example/mcp?token=abc123&team=blue',
        'url.query': 'alt=sse&key=abc123',
        'http.request.header.authorization': ['Bearer abcdefgh123'],
        'http.request.header.x-goog-api-key': ['plainvalue'],
        'http.request.header.x-tenant': ['acme'],
        'app.api_key': 'plainvalue2',
        'http.response.status_code': 401,
        'url.path': '/v1/chat/completions',
      });
      s.recordException(new Error('refused: {"x-api-key":"q1w2e3"} with sk-vk-AbCdEfGhIjKlMnOpQrSt'));
      s.setStatus({ code: SpanStatusCode.ERROR, message: 'Authorization: Basic dXNlcjpwYXNz' });
    });
    const redacted = redactSpan(span);
    const row = toSpanRow(redacted);
    expect(row.attributes).toEqual({
      'url.full': 'https://[redacted]@mcp.example/mcp?token=[redacted]&team=blue',
      'url.query': 'alt=sse&key=[redacted]',
      'http.request.header.authorization': ['[redacted]'],
      'http.request.header.x-goog-api-key': ['[redacted]'],
      'http.request.header.x-tenant': ['acme'],
      'app.api_key': '[redacted]',
      'http.response.status_code': 401,
      'url.path': '/v1/chat/completions',
    });
    expect(row.status_message).toBe('Authorization: Basic [redacted]');
    const text = JSON.stringify(row);
    for (const secret of [
      'pw@',
      'abc123',
      'abcdefgh123',
      'plainvalue',
      'q1w2e3',
      'AbCdEfGhIjKlMnOpQrSt',
      'dXNlcjpwYXNz',
    ])
      expect(text).not.toContain(secret);
    expect(row.events[0]!.attributes['exception.message']).toBe(
      'refused: {"x-api-key":"[redacted]"} with [redacted]',
    );
    // Everything not overridden is read through to the span.
    expect(redacted.spanContext()).toEqual(span.spanContext());
    expect(redacted.duration).toEqual(span.duration);
    // The original is left as it was.
    expect(span.attributes['url.query']).toBe('alt=sse&key=abc123');
  });

  it('passes a span with nothing to redact on as is', () => {
    const span = finishedSpan((s) =>
      s.setAttributes({
        'url.path': '/api/agent-server/agents/1',
        'db.query.text': 'select 1 where "key" = $1',
      }),
    );
    expect(redactSpan(span)).toBe(span);
  });
});
