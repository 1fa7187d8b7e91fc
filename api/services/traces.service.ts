import { NotFoundError, ValidationError } from '../errors.js';
import type {
  LatencyRow,
  SpanDbRow,
  TimeWindow,
  TracesRepository,
} from '../repositories/traces.repository.js';
import type {
  EndpointStatsQuery,
  ModelStatsQuery,
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

function latency<T extends LatencyRow>(row: T): T & { error_rate: number } {
  return {
    ...row,
    error_rate: row.call_count > 0 ? round(row.error_count / row.call_count) : 0,
    avg_ms: round(row.avg_ms),
    p50_ms: round(row.p50_ms),
    p95_ms: round(row.p95_ms),
    p99_ms: round(row.p99_ms),
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
  constructor(private readonly repo: TracesRepository) {}

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
    const rows = await this.repo.endpointStats({
      ...this.window(q),
      serviceName: q.service_name,
      spanKind: q.span_kind,
      limit: q.limit,
      offset: q.offset,
    });
    return rows.map(latency);
  }

  async services(q: Window) {
    return (await this.repo.serviceStats(this.window(q))).map(latency);
  }

  async models(q: ModelStatsQuery) {
    const rows = await this.repo.modelStats({ ...this.window(q), projectId: q.project_id });
    return rows.map((r) => ({
      ...r,
      cost_usd: r.cost_usd == null ? null : Math.round(r.cost_usd * 1e6) / 1e6,
      p50_ms: round(r.p50_ms),
      p95_ms: round(r.p95_ms),
    }));
  }
}
