import { SpanKind } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { isEntrySpan, RollupAggregator, rollupOf } from '../../../core/telemetry/rollup-aggregator.js';
import { bucketIndex } from '../../../core/telemetry/rollup-histogram.js';
import { fakeSpan } from '../../helpers/fake-span.js';

const MINUTE = Date.UTC(2026, 10, 26, 12, 34);

describe('rollup aggregation', () => {
  it('keys a span by minute, service, name, kind, project, status and entry; a model call also by provider, model and key', () => {
    const [key, o] = rollupOf(
      fakeSpan({
        service: 'agent-server-worker',
        name: 'chat gpt-test',
        kind: SpanKind.CLIENT,
        durationMs: 812.5,
        startMs: MINUTE + 59_999,
        error: true,
        parent: { spanId: 'a'.repeat(16), isRemote: false },
        attributes: {
          'gen_ai.request.model': 'gpt-test',
          'gen_ai.system': 'openai',
          'gen_ai.usage.input_tokens': 12,
          'gen_ai.usage.output_tokens': 4.4,
          'gen_ai.usage.cost_usd': 0.002,
          'agent_server.project.id': 'p-1',
          'agent_server.virtual_key.id': 'vk-1',
        },
      }),
    );
    expect(key).toEqual({
      minute: MINUTE,
      serviceName: 'agent-server-worker',
      spanName: 'chat gpt-test',
      spanKind: 'CLIENT',
      projectId: 'p-1',
      status: 'error',
      entry: false,
      provider: 'openai',
      model: 'gpt-test',
      virtualKeyId: 'vk-1',
      console: false,
    });
    expect(o).toEqual({ durationMs: 812.5, inputTokens: 12, outputTokens: 4, costUsd: 0.002 });
    // Not a model call: the attribute on a server span, or no model.
    const [server] = rollupOf(
      fakeSpan({ name: 'POST /x', durationMs: 1, attributes: { 'gen_ai.request.model': 'm' } }),
    );
    expect(server).toMatchObject({ model: '', provider: '', virtualKeyId: '', entry: true, status: 'ok' });
    // The console's own requests (and what ran inside them) are told apart, for the statistics to leave out.
    const [ofConsole] = rollupOf(
      fakeSpan({ name: 'GET /x', durationMs: 1, attributes: { 'agent_server.client': 'console' } }),
    );
    expect(ofConsole.console).toBe(true);
    const [other] = rollupOf(
      fakeSpan({ name: 'GET /x', durationMs: 1, attributes: { 'agent_server.client': 'my-app' } }),
    );
    expect(other.console).toBe(false);
  });

  it("tells entry spans (what /stats/services counts) from the rest, Temporal's by name", () => {
    const entry = (name: string, parent?: { isRemote: boolean }, sink = false) =>
      isEntrySpan(
        fakeSpan({ name, durationMs: 1, parent: parent && { spanId: 'a'.repeat(16), ...parent } }),
        sink,
      );
    expect(entry('GET /agents')).toBe(true);
    expect(entry('GET /agents', { isRemote: true })).toBe(true); // a caller's traceparent
    expect(entry('pg.query:SELECT', { isRemote: false })).toBe(false);
    expect(entry('RunActivity:callModel', { isRemote: true })).toBe(false);
    expect(entry('RunActivity:callModel')).toBe(false);
    expect(entry('HandleUpdate:converse', { isRemote: false }, true)).toBe(true);
    expect(entry('RunWorkflow:sessionWorkflow', { isRemote: false }, true)).toBe(true);
    expect(entry('StartActivity:callModel', { isRemote: false }, true)).toBe(false);
    expect(entry('RunWorkflow:sessionWorkflow', undefined, true)).toBe(true);
  });

  it('adds count, sum, min, max, buckets and tokens per key; cost stays null until a call has one', () => {
    const agg = new RollupAggregator();
    const span = (durationMs: number, attributes = {}) =>
      rollupOf(
        fakeSpan({
          name: 'chat m',
          kind: SpanKind.CLIENT,
          durationMs,
          startMs: MINUTE,
          attributes: { 'gen_ai.request.model': 'm', ...attributes },
        }),
      );
    for (const [k, o] of [span(10, { 'gen_ai.usage.input_tokens': 3 }), span(30), span(20)]) agg.add(k, o);
    const [cell] = agg.drain();
    expect(cell).toMatchObject({ count: 3, sumMs: 60, minMs: 10, maxMs: 30, inputTokens: 3, costUsd: null });
    expect(cell!.buckets).toEqual(
      new Map([
        [bucketIndex(10), 1],
        [bucketIndex(20), 1],
        [bucketIndex(30), 1],
      ]),
    );
    expect(agg.size).toBe(0);
    // A failed flush's cell merges back into what came since.
    agg.add(...span(40, { 'gen_ai.usage.cost_usd': 0.5 }));
    agg.merge(cell!);
    expect(agg.drain()).toMatchObject([{ count: 4, sumMs: 100, minMs: 10, maxMs: 40, costUsd: 0.5 }]);
  });

  it('holds at most maxCells keys per interval, counting what it refuses', () => {
    const agg = new RollupAggregator(2);
    for (const name of ['a', 'b', 'c', 'a'])
      agg.add(...rollupOf(fakeSpan({ name, durationMs: 1, startMs: MINUTE })));
    expect(agg.size).toBe(2);
    expect(agg.dropped).toBe(1);
  });

  it('cuts long text and cleans NULs (text is part of the row key)', () => {
    const [key] = rollupOf(fakeSpan({ name: `GET /${'x'.repeat(1000)}\u0000`, durationMs: 1 }));
    expect(key.spanName).toHaveLength(256);
    const [nul] = rollupOf(fakeSpan({ name: 'a\u0000b', durationMs: 1 }));
    expect(nul.spanName).toBe('a\uFFFDb');
  });
});
