import { randomBytes } from 'node:crypto';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../core/db/knex.js';
import { PostgresSpanExporter } from '../../../core/telemetry/postgres-exporter.js';
import {
  SPAN_COLUMNS,
  spanToCopyLine,
  toSpanRow,
  type AnyReadableSpan,
} from '../../../core/telemetry/span-row.js';
import { databaseUrl } from '../../helpers/services.js';

/** A finished span as the SDK hands it to processors (enough of ReadableSpan for the exporter). */
function span(over: Partial<Record<string, unknown>> = {}): AnyReadableSpan {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return {
    name: 'chat gpt-4o-mini\u0000',
    kind: SpanKind.CLIENT,
    spanContext: () => ({ traceId, spanId, traceFlags: 1 }),
    parentSpanContext: { traceId, spanId: 'c'.repeat(16), traceFlags: 1 },
    startTime: [1_763_863_311, 74_191_999],
    endTime: [1_763_863_311, 75_000_001],
    duration: [0, 808_002],
    status: { code: SpanStatusCode.ERROR, message: 'upstream 500' },
    attributes: {
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.usage.input_tokens': 10,
      'agent_server.project.id': 'p-1',
      'gen_ai.conversation.id': 'conv\u0000x',
      tags: ['a', 'b\u0000'],
    },
    events: [
      { name: 'exception', time: [1_763_863_311, 74_500_000], attributes: { 'exception.type': 'Error' } },
    ],
    resource: { attributes: { 'service.name': 'test-span-wire' } },
    instrumentationScope: { name: 'agent-server-genai' },
    ...over,
  } as unknown as AnyReadableSpan;
}

/** Compared as stored; the two timestamps are read back formatted. */
const COLUMNS = SPAN_COLUMNS.filter((c) => c !== 'start_time' && c !== 'end_time');

/** What Postgres gives back for a JS string: lone surrogates become U+FFFD on the way in (UTF-8). */
function wellFormed(value: unknown): unknown {
  if (typeof value === 'string') return value.toWellFormed();
  if (Array.isArray(value)) return value.map(wellFormed);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [wellFormed(k), wellFormed(v)]));
  return value;
}

describe('span rows on the wire to Postgres', () => {
  let db: Db;
  beforeAll(() => {
    db = createDb(databaseUrl());
  });
  afterAll(async () => {
    await db.destroy();
  });

  async function exportSpans(items: Buffer[]): Promise<void> {
    const result = await new Promise<{ code: number; error?: Error }>((resolve) =>
      new PostgresSpanExporter(db).export(items, resolve),
    );
    expect(result.error).toBeUndefined();
    expect(result.code).toBe(0);
  }

  async function stored(traceId: string, spanId: string): Promise<Array<Record<string, unknown>>> {
    return db('spans')
      .where({ trace_id: traceId, span_id: spanId })
      .select(
        ...COLUMNS,
        db.raw(`to_char(start_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as start_time`),
        db.raw(`to_char(end_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as end_time`),
      );
  }

  it('stores the same row as the row form, timestamps to the microsecond; a workflow span exported again is ignored', async () => {
    // Workflow spans are the ones that can arrive twice (a workflow task re-run
    // after its worker died emits them again, with the same ids).
    const workflow = { instrumentationScope: { name: '@temporalio/interceptor-workflow' } };
    const full = span(workflow);
    const root = span({
      ...workflow,
      parentSpanContext: undefined,
      status: { code: SpanStatusCode.UNSET },
      events: [],
    });
    const items = [full, root].map(spanToCopyLine);
    // The second export finds both spans stored: the batch is written again, skipping them.
    for (let i = 0; i < 2; i++) await exportSpans(items);
    // A batch mixing a stored span with a new one stores the new one.
    const fresh = span(workflow);
    await exportSpans([spanToCopyLine(full), spanToCopyLine(fresh)]);
    for (const s of [full, root, fresh]) {
      const expected = toSpanRow(s);
      const rows = await stored(expected.trace_id, expected.span_id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toEqual({
        ...Object.fromEntries(COLUMNS.map((c) => [c, expected[c]])),
        start_time: expected.start_time,
        end_time: expected.end_time,
      });
    }
    expect(toSpanRow(full)).toMatchObject({
      start_time: '2025-11-23T02:01:51.074191Z',
      name: 'chat gpt-4o-mini\uFFFD',
      project_id: 'p-1',
      conversation_id: 'conv\uFFFDx',
      status_message: 'upstream 500',
    });
  });

  it('stores any text (tabs, newlines, backslashes, NULs, lone surrogates, unicode) as the row form has it', async () => {
    const text = fc.string({ unit: 'binary', maxLength: 40 });
    const value = fc.oneof(
      text,
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Object.is(x, -0)),
      fc.boolean(),
      fc.array(text, { maxLength: 3 }),
    );
    await fc.assert(
      fc.asyncProperty(
        text,
        fc.option(
          text.filter((m) => m.length > 0),
          { nil: undefined },
        ),
        fc.dictionary(text, value, { maxKeys: 5 }),
        text,
        async (name, message, attributes, eventName) => {
          const s = span({
            name,
            status: { code: SpanStatusCode.ERROR, message },
            attributes: { ...attributes, 'agent_server.project.id': name.slice(0, 10) || 'p' },
            events: [{ name: eventName, time: [1_763_863_311, 1_000], attributes }],
          });
          await exportSpans([spanToCopyLine(s)]);
          const expected = toSpanRow(s);
          const rows = await stored(expected.trace_id, expected.span_id);
          expect(rows).toHaveLength(1);
          expect(rows[0]).toEqual(
            wellFormed({
              ...Object.fromEntries(COLUMNS.map((c) => [c, expected[c]])),
              start_time: expected.start_time,
              end_time: expected.end_time,
            }),
          );
        },
      ),
      { numRuns: 150 },
    );
  });
});
