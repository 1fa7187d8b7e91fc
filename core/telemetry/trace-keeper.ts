import { SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan, Span } from '@opentelemetry/sdk-trace';
import { keepVerdict } from './sampler.js';
import { hrTimeToMs } from './span-row.js';

export interface KeeperOptions {
  /** TRACE_KEEP_SLOW_MS: a local root at least this long keeps its trace. */
  keepSlowMs: number;
  /** Spans held for one trace; more are lost (counted). */
  maxSpansPerTrace?: number;
  /** Spans held in all; beyond, the oldest held trace is decided early. */
  maxHeldSpans?: number;
  /** A trace still open after this long is decided with what it has (a span never ended). */
  maxHoldMs?: number;
  /** Traces remembered as kept, so their late spans are stored too. */
  rememberKept?: number;
}

export interface KeeperStats {
  /** Traces held until their local root ends, and their spans. */
  held_traces: number;
  held_spans: number;
  /** Traces the sampler dropped but that were stored for an error or a slow root, since start. */
  kept_for_error: number;
  kept_for_slowness: number;
  /** Traces (their local part) not stored, since start. */
  dropped_traces: number;
  /** Spans lost because their trace held too many. */
  lost_spans: number;
}

/** What this process holds of one trace the sampler dropped. */
interface Held {
  traceId: string;
  /** Spans started here and not yet ended. */
  open: number;
  spans: ReadableSpan[];
  /** A kept span joined (an agent turn started inside an ordinary request): store as it goes. */
  kept: boolean;
  reason: 'error' | 'slow' | undefined;
  since: number;
  done: boolean;
}

/** On a span object: the held trace its start was counted in. */
const HELD = Symbol('agent-server.held-trace');
type Marked = { [HELD]?: Held };

/**
 * Between the spans and the exporters: decides which traces are stored. A
 * span whose trace state says keep (the sampler's verdict, or an agent turn,
 * sampler.ts) goes straight on. The others are held, per trace, until every
 * span this process started in that trace has ended (its local root last),
 * plus one turn of the event loop for spans arriving together (a workflow
 * task's spans come in one batch); then the trace is stored if a local root —
 * a span without a parent in this process, or a workflow span — ended in
 * error or lasted `keepSlowMs` or more, and dropped otherwise. Memory is
 * bounded: per trace, in all, and in time.
 */
export class TraceKeeper {
  private readonly held = new Map<string, Held>();
  private readonly kept = new Map<string, true>();
  private heldSpans = 0;
  private settling: Held[] = [];
  private settleScheduled = false;
  private readonly counts = { error: 0, slow: 0, dropped: 0, lost: 0 };
  private readonly o: Required<KeeperOptions>;
  private readonly sweepTimer: NodeJS.Timeout;

  constructor(
    private readonly store: (span: ReadableSpan) => void,
    options: KeeperOptions,
  ) {
    this.o = {
      maxSpansPerTrace: 1_000,
      maxHeldSpans: 20_000,
      maxHoldMs: 600_000,
      rememberKept: 10_000,
      ...options,
    };
    this.sweepTimer = setInterval(() => this.sweep(), Math.min(10_000, this.o.maxHoldMs));
    this.sweepTimer.unref();
  }

  onStart(span: Span): void {
    const sc = span.spanContext();
    const verdict = keepVerdict(sc);
    let h = this.held.get(sc.traceId);
    if (verdict === true) {
      // An agent turn inside an ordinary request: the whole local trace is stored.
      if (!h) return;
      this.keepNow(h);
    } else if (!h) {
      if (this.kept.has(sc.traceId)) return;
      h = {
        traceId: sc.traceId,
        open: 0,
        spans: [],
        kept: false,
        reason: undefined,
        since: Date.now(),
        done: false,
      };
      this.held.set(sc.traceId, h);
    }
    h.open++;
    (span as Marked)[HELD] = h;
  }

  /**
   * `span` is what is stored (normalized, redacted), `original` the object the
   * SDK handed to onStart; `fromWorkflowSink` marks Temporal's workflow spans.
   */
  onEnd(span: ReadableSpan, original: ReadableSpan, fromWorkflowSink: boolean): void {
    const traceId = span.spanContext().traceId;
    let h = (original as Marked)[HELD];
    if (h?.done) h = undefined;
    else if (h) h.open--;
    h ??= this.held.get(traceId);
    if (keepVerdict(span.spanContext()) === true || this.kept.has(traceId)) {
      if (h && !h.kept) this.keepNow(h);
      this.store(span);
    } else if (h?.kept) {
      this.store(span);
    } else {
      if (!h) {
        // A span this process did not see start: a workflow span, or a late one of a dropped trace.
        h = { traceId, open: 0, spans: [], kept: false, reason: undefined, since: Date.now(), done: false };
        this.held.set(traceId, h);
      }
      this.hold(h, span, fromWorkflowSink);
    }
    if (h && h.open <= 0) this.settleSoon(h);
  }

  /** Decides every held trace with nothing open now, rather than on the next turn of the event loop. */
  settleNow(): void {
    const batch = this.settling;
    this.settling = [];
    this.settleScheduled = false;
    for (const h of batch) if (!h.done && h.open <= 0) this.decide(h);
  }

  stats(): KeeperStats {
    return {
      held_traces: this.held.size,
      held_spans: this.heldSpans,
      kept_for_error: this.counts.error,
      kept_for_slowness: this.counts.slow,
      dropped_traces: this.counts.dropped,
      lost_spans: this.counts.lost,
    };
  }

  shutdown(): void {
    clearInterval(this.sweepTimer);
    for (const h of [...this.held.values()]) this.decide(h);
  }

  private hold(h: Held, span: ReadableSpan, fromWorkflowSink: boolean): void {
    const parent = span.parentSpanContext;
    const localRoot = fromWorkflowSink || !parent || parent.isRemote === true;
    if (localRoot && h.reason !== 'error') {
      if (span.status.code === SpanStatusCode.ERROR) h.reason = 'error';
      else if (hrTimeToMs(span.duration) >= this.o.keepSlowMs) h.reason = 'slow';
    }
    if (h.spans.length >= this.o.maxSpansPerTrace) {
      this.counts.lost++;
      return;
    }
    while (this.heldSpans >= this.o.maxHeldSpans) {
      const oldest = this.held.values().next().value;
      if (!oldest || oldest === h) break;
      this.decide(oldest);
    }
    h.spans.push(span);
    this.heldSpans++;
  }

  private keepNow(h: Held): void {
    h.kept = true;
    for (const s of h.spans) this.store(s);
    this.heldSpans -= h.spans.length;
    h.spans = [];
  }

  private settleSoon(h: Held): void {
    this.settling.push(h);
    if (this.settleScheduled) return;
    this.settleScheduled = true;
    setImmediate(() => this.settleNow());
  }

  private decide(h: Held): void {
    if (h.done) return;
    h.done = true;
    if (this.held.get(h.traceId) === h) this.held.delete(h.traceId);
    this.heldSpans -= h.spans.length;
    if (h.kept || h.reason) {
      if (h.reason) this.counts[h.reason]++;
      for (const s of h.spans) this.store(s);
      this.remember(h.traceId);
    } else {
      this.counts.dropped++;
    }
    h.spans = [];
  }

  private remember(traceId: string): void {
    this.kept.delete(traceId);
    this.kept.set(traceId, true);
    if (this.kept.size > this.o.rememberKept) this.kept.delete(this.kept.keys().next().value!);
  }

  /** Traces held longer than maxHoldMs (a span that never ended) are decided with what they have. */
  private sweep(): void {
    const cutoff = Date.now() - this.o.maxHoldMs;
    for (const h of this.held.values()) {
      if (h.since > cutoff) break; // insertion order: the rest are younger
      this.decide(h);
    }
  }
}
