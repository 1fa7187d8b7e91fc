import {
  context as api,
  trace,
  type Context,
  type Span,
  type SpanOptions,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';

/**
 * The global TracerProvider when api and worker share one process (`npm start`).
 * A span's service name is a property of its provider's resource, so each role
 * has its own provider; instrumentations (pg, undici) know nothing of roles and
 * ask the global one. This router gives a span the provider of its parent span
 * (so a query made inside an activity belongs to the worker and one made by an
 * HTTP handler to the api), and parentless spans to the default role.
 */
export class RoleRoutingTracerProvider implements TracerProvider {
  private readonly byResource = new Map<Resource, TracerProvider>();
  private readonly tracers = new Map<string, RoutingTracer>();

  constructor(private defaultProvider: TracerProvider) {}

  add(resource: Resource, provider: TracerProvider): void {
    this.byResource.set(resource, provider);
  }

  getTracer(name: string, version?: string, options?: { schemaUrl?: string }): Tracer {
    const key = `${name}@${version ?? ''}`;
    let tracer = this.tracers.get(key);
    if (!tracer) {
      tracer = new RoutingTracer((ctx) => this.providerFor(ctx), name, version, options);
      this.tracers.set(key, tracer);
    }
    return tracer;
  }

  private providerFor(ctx: Context): TracerProvider {
    const parent: (Span & { resource?: Resource }) | undefined = trace.getSpan(ctx);
    return (parent?.resource && this.byResource.get(parent.resource)) || this.defaultProvider;
  }
}

class RoutingTracer implements Tracer {
  private readonly cache = new Map<TracerProvider, Tracer>();

  constructor(
    private readonly pick: (ctx: Context) => TracerProvider,
    private readonly name: string,
    private readonly version: string | undefined,
    private readonly options: { schemaUrl?: string } | undefined,
  ) {}

  startSpan(name: string, options?: SpanOptions, ctx: Context = api.active()): Span {
    const provider = this.pick(ctx);
    let tracer = this.cache.get(provider);
    if (!tracer) {
      tracer = provider.getTracer(this.name, this.version, this.options);
      this.cache.set(provider, tracer);
    }
    return tracer.startSpan(name, options, ctx);
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    options: SpanOptions,
    fn: F,
  ): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    options: SpanOptions,
    ctx: Context,
    fn: F,
  ): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    a?: SpanOptions | F,
    b?: Context | F,
    c?: F,
  ): ReturnType<F> {
    const fn = (c ?? (typeof b === 'function' ? b : a)) as F;
    const options = typeof a === 'object' ? a : undefined;
    const parent = typeof b === 'object' ? b : api.active();
    const span = this.startSpan(name, options, parent);
    return api.with(trace.setSpan(parent, span), fn as (s: Span) => ReturnType<F>, undefined, span);
  }
}
