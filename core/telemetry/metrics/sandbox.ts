import type {
  Attributes,
  BatchObservableResult,
  Counter,
  Histogram,
  Meter,
  ObservableGauge,
} from '@opentelemetry/api';
import { errorName, errorTypeLabel } from './genai.js';

const ENSURE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const COMMAND_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/** How `ensure` found the session's sandbox: running already, claimed from the pool, or started cold. */
export type EnsureResult = 'existing' | 'pool' | 'created';

/** What the worker knows of its backend's sandboxes, read at each collection. */
export interface SandboxGauges {
  backend: string;
  /** Running session sandboxes of this installation, as the reaper's last pass listed them. */
  running(): number | undefined;
  /** Docker: waiting pool sandboxes as last listed, and SANDBOX_POOL_SIZE. */
  pool?(): { waiting: number | undefined; limit: number };
}

export class SandboxMetrics {
  private readonly ensureDuration: Histogram;
  private readonly coldStarts: Counter;
  private readonly claims: Counter;
  private readonly commandDuration: Histogram;
  private readonly running: ObservableGauge;
  private readonly poolSize: ObservableGauge;
  private readonly poolLimit: ObservableGauge;
  private readonly attrs = new Map<string, Attributes>();

  constructor(private readonly meter: Meter) {
    this.ensureDuration = meter.createHistogram('agent_server.sandbox.ensure.duration', {
      description:
        'Making sure a session’s sandbox is up, by agent_server.sandbox.ensure.result (existing, pool, created); error.type when it failed.',
      unit: 's',
      advice: { explicitBucketBoundaries: ENSURE_BUCKETS },
    });
    this.coldStarts = meter.createCounter('agent_server.sandbox.cold_starts', {
      description: 'Sandboxes started for a session (not taken from the pool).',
      unit: '{sandbox}',
    });
    this.claims = meter.createCounter('agent_server.sandbox.pool.claims', {
      description: 'Pre-started pool sandboxes a session took.',
      unit: '{sandbox}',
    });
    this.commandDuration = meter.createHistogram('agent_server.sandbox.command.duration', {
      description:
        'One command in a sandbox (bash or python), ensure included; error.type when it could not run or timed out.',
      unit: 's',
      advice: { explicitBucketBoundaries: COMMAND_BUCKETS },
    });
    this.running = meter.createObservableGauge('agent_server.sandbox.running', {
      description:
        'Running session sandboxes of this installation, as the reaper’s last pass found them (the same on every worker sharing the backend).',
      unit: '{sandbox}',
    });
    this.poolSize = meter.createObservableGauge('agent_server.sandbox.pool.size', {
      description: 'Pre-started sandboxes waiting in the pool, as last listed (docker).',
      unit: '{sandbox}',
    });
    this.poolLimit = meter.createObservableGauge('agent_server.sandbox.pool.limit', {
      description: 'How many sandboxes the pool keeps waiting (SANDBOX_POOL_SIZE).',
      unit: '{sandbox}',
    });
  }

  private cached(key: string, make: () => Attributes): Attributes {
    let a = this.attrs.get(key);
    if (!a) {
      a = make();
      if (this.attrs.size < 1_000) this.attrs.set(key, a);
    }
    return a;
  }

  private backendAttrs(backend: string): Attributes {
    return this.cached(`b\0${backend}`, () => ({ 'agent_server.sandbox.backend': backend }));
  }

  ensured(backend: string, seconds: number, result: EnsureResult): void {
    this.ensureDuration.record(
      seconds,
      this.cached(`e\0${backend}\0${result}`, () => ({
        'agent_server.sandbox.backend': backend,
        'agent_server.sandbox.ensure.result': result,
      })),
    );
    if (result === 'created') this.coldStarts.add(1, this.backendAttrs(backend));
    else if (result === 'pool') this.claims.add(1, this.backendAttrs(backend));
  }

  ensureFailed(backend: string, seconds: number, err: unknown): void {
    const type = errorTypeLabel(errorName(err));
    this.ensureDuration.record(
      seconds,
      this.cached(`ef\0${backend}\0${type}`, () => ({
        'agent_server.sandbox.backend': backend,
        'error.type': type,
      })),
    );
  }

  /** `errorType`: the error's class name, `timeout` for a command that timed out; undefined when it ran. */
  command(backend: string, kind: 'bash' | 'python', seconds: number, errorType?: string): void {
    const type = errorType === undefined ? '' : errorTypeLabel(errorType);
    this.commandDuration.record(
      seconds,
      this.cached(`c\0${backend}\0${kind}\0${type}`, () => ({
        'agent_server.sandbox.backend': backend,
        'agent_server.sandbox.command.kind': kind,
        ...(type ? { 'error.type': type } : {}),
      })),
    );
  }

  /** Reports the backend's gauges at each collection until the returned function is called. */
  observe(gauges: SandboxGauges): () => void {
    const attrs = this.backendAttrs(gauges.backend);
    const callback = (result: BatchObservableResult) => {
      const running = gauges.running();
      if (running !== undefined) result.observe(this.running, running, attrs);
      const pool = gauges.pool?.();
      if (!pool) return;
      result.observe(this.poolLimit, pool.limit, attrs);
      if (pool.waiting !== undefined) result.observe(this.poolSize, pool.waiting, attrs);
    };
    const observables = [this.running, this.poolSize, this.poolLimit];
    this.meter.addBatchObservableCallback(callback, observables);
    return () => this.meter.removeBatchObservableCallback(callback, observables);
  }
}
