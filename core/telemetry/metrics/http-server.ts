import type { Attributes, Histogram, Meter } from '@opentelemetry/api';

/** The HTTP semantic conventions' advised buckets for request durations, in seconds. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/**
 * `http.server.request.duration` by method, route template and status. The
 * attribute objects are made once per combination and reused: methods are
 * the known ones or `_OTHER`, routes are the router's templates (a request
 * no route matched has no `http.route`), statuses are three digits, so the
 * combinations are few.
 */
export class HttpServerMetrics {
  private readonly duration: Histogram;
  /** route ('' when none) → method → status → attributes. */
  private readonly attrs = new Map<string, Map<string, Map<number, Attributes>>>();
  private size = 0;

  constructor(meter: Meter) {
    this.duration = meter.createHistogram('http.server.request.duration', {
      description: 'Duration of HTTP server requests, from the first middleware to the handler’s end.',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
  }

  /** `method`: a known method or `_OTHER`; `route`: the matched template, undefined when none matched. */
  record(method: string, route: string | undefined, status: number, seconds: number): void {
    this.duration.record(seconds, this.attributes(method, route, status));
  }

  private attributes(method: string, route: string | undefined, status: number): Attributes {
    let byMethod = this.attrs.get(route ?? '');
    if (!byMethod) this.attrs.set(route ?? '', (byMethod = new Map<string, Map<number, Attributes>>()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map<number, Attributes>()));
    let a = byStatus.get(status);
    if (!a) {
      a = { 'http.request.method': method, 'http.response.status_code': status };
      if (route !== undefined) a['http.route'] = route;
      // Bounded anyway (templates × methods × statuses); the cap only guards against a bug upstream.
      if (++this.size < 10_000) byStatus.set(status, a);
    }
    return a;
  }
}
