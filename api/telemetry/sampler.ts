import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import type { TracesSampler } from '../config.js';

/**
 * The sampler OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG name, as the
 * OpenTelemetry SDK environment specification defines them (the JS SDK no
 * longer reads them itself). The default, `parentbased_always_on`, keeps
 * every trace, and the trace statistics count every request. A ratio sampler
 * stores a share of the traces, and the statistics then count only what was
 * stored. The `parentbased_` ones follow an incoming `traceparent`'s sampled
 * flag, so a caller's decision holds across services.
 */
export function buildSampler(name: TracesSampler, ratio: number): Sampler {
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}
