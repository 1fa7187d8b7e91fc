import { NotFoundError, ValidationError } from '../../core/errors.js';
import { bucketsFromJson, percentiles } from '../../core/telemetry/rollup-histogram.js';
import type {
  LatencyRow,
  SpanDbRow,
  TimeWindow,
  TracesRepository,
} from '../../core/repositories/traces.repository.js';
import type {
  EndpointStatsQuery,
  ModelStatsQuery,
  ServiceStatsQuery,
  TraceListQuery,
  Window,
} from '../schemas/traces.schemas.js';

const DAY_MS = 86_400_000;

export interface TreeNode {
  span_id: string;
  name: string;
  service_name: string;
  duration_ms: number;
  status_code: string;
  children: TreeNode[];
}

/** Durations to the microsecond, the resolution of the stored timestamps; no float noise on the wire. */
const round = (n: number | null | undefined) => (n == null ? 0 : Math.round(Number(n) * 1000) / 1000);

/**
 * p50, p95 and p99 of a rollup group, from its merged histogram: within
 * PERCENTILE_RELATIVE_ERROR (2.2 %) of `percentile_cont` over the exact
 * durations (core/telemetry/rollup-histogram.ts).
 */
function latencyPercentiles(row: LatencyRow): [number, number, number] {
  const [p50, p95, p99] = percentiles(
    { count: row.call_count, min: row.min_ms, max: row.max_ms, buckets: bucketsFromJson(row.buckets) },
    [0.5, 0.95, 0.99],
  );
  return [p50!, p95!, p99!];
}

/** The response fields of a group: counts, error rate, average and max exact; percentiles from the histogram. */
function latency(row: LatencyRow) {
  const [p50, p95, p99] = latencyPercentiles(row);
  const n = row.call_count;
  return {
    call_count: n,
    error_count: row.error_count,
    error_rate: n > 0 ? round(row.error_count / n) : 0,
    avg_ms: n > 0 ? round(row.sum_ms / n) : 0,
    p50_ms: round(p50),
    p95_ms: round(p95),
    p99_ms: round(p99),
    max_ms: round(row.max_ms),
  };
}

/** Builds the span tree; a span whose parent is not stored (an external caller, a dropped span) is a root. */
export function spanTree(spans: SpanDbRow[]): TreeNode[] {
  const nodes = new Map<string, TreeNode>();
  for (const s of spans) {
    nodes.set(s.span_id, {
      span_id: s.span_id,
      name: s.name,
      service_name: s.service_name,
      duration_ms: round(s.duration_ms),
      status_code: s.status_code,
      children: [],
    });
  }
  const roots: TreeNode[] = [];
  for (const s of spans) {
    const parent = s.parent_span_id ? nodes.get(s.parent_span_id) : undefined;
    (parent && s.parent_span_id !== s.span_id ? parent.children : roots).push(nodes.get(s.span_id)!);
  }
  return roots;
}

export class TracesService {
  /**
   * `beforeStats` runs before each statistics read: this process adds its
   * latest counts to the rollups first, so what it just served is in the answer.
   */
  constructor(
    private readonly repo: TracesRepository,
    private readonly beforeStats: () => Promise<void> = () => Promise.resolve(),
  ) {}

  /** Default window: the last 24 hours; an end before the start is the caller's mistake (400). */
  window(q: Window): TimeWindow {
    const end = q.end_time ? new Date(q.end_time) : new Date();
    const start = q.start_time ? new Date(q.start_time) : new Date(end.getTime() - DAY_MS);
    if (start > end)
      throw ValidationError.field('start_time', 'start_time must not be after end_time', 'date.max');
    return { start, end };
  }

  async list(q: TraceListQuery) {
    if (
      q.min_duration_ms !== undefined &&
      q.max_duration_ms !== undefined &&
      q.min_duration_ms > q.max_duration_ms
    ) {
      throw ValidationError.field(
        'min_duration_ms',
        'min_duration_ms must not exceed max_duration_ms',
        'number.max',
      );
    }
    const rows = await this.repo.listTraces({
      ...this.window(q),
      serviceName: q.service_name,
      spanName: q.span_name,
      minDurationMs: q.min_duration_ms,
      maxDurationMs: q.max_duration_ms,
      hasErrors: q.has_errors,
      projectId: q.project_id,
      agentId: q.agent_id,
      conversationId: q.conversation_id,
      includeConsole: q.include_console,
      limit: q.limit,
      offset: q.offset,
    });
    return rows.map((r) => ({
      ...r,
      start_time: r.start_time.toISOString(),
      end_time: r.end_time.toISOString(),
      duration_ms: round(r.duration_ms),
    }));
  }

  async get(traceId: string) {
    const spans = await this.repo.spansOf(traceId);
    if (spans.length === 0) throw new NotFoundError('trace');
    return {
      trace_id: traceId,
      spans: spans.map((s) => ({
        ...s,
        start_time: s.start_time.toISOString(),
        end_time: s.end_time.toISOString(),
        duration_ms: round(s.duration_ms),
      })),
      tree: spanTree(spans),
    };
  }

  async endpoints(q: EndpointStatsQuery) {
    const window = this.window(q);
    await this.beforeStats();
    const rows = await this.repo.endpointStats({
      ...window,
      serviceName: q.service_name,
      spanKind: q.span_kind,
      includeConsole: q.include_console,
      limit: q.limit,
      offset: q.offset,
    });
    return rows.map((r) => ({ service_name: r.service_name, span_name: r.span_name, ...latency(r) }));
  }

  async services(q: ServiceStatsQuery) {
    const window = this.window(q);
    await this.beforeStats();
    const rows = await this.repo.serviceStats({ ...window, includeConsole: q.include_console });
    return rows.map((r) => ({ service_name: r.service_name, ...latency(r) }));
  }

  async models(q: ModelStatsQuery) {
    const window = this.window(q);
    await this.beforeStats();
    const rows = await this.repo.modelStats({
      ...window,
      projectId: q.project_id,
      includeConsole: q.include_console,
    });
    return rows.map((r) => {
      const [p50, p95] = latencyPercentiles(r);
      return {
        provider: r.provider,
        model: r.model,
        call_count: r.call_count,
        error_count: r.error_count,
        input_tokens: r.input_tokens,
        output_tokens: r.output_tokens,
        cost_usd: r.cost_usd == null ? null : Math.round(r.cost_usd * 1e6) / 1e6,
        p50_ms: round(p50),
        p95_ms: round(p95),
      };
    });
  }
}
