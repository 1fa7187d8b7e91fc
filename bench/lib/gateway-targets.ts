/**
 * The parts of the gateway benches (`gateway`, `gateway-peers`): the scripted
 * vendor in its own process, the OpenAI chat request they all send, a
 * sequential loop (concurrency 1) and an autocannon cell (concurrency 64) with
 * CPU per request from /proc, and the provider and virtual keys set up through
 * the configuration API.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { cpuSeconds, mainThreadCpuSeconds, postgresCpuSeconds } from './proc-cpu.js';
import { ROOT } from './scratch.js';
import { postConfig } from '../../test/helpers/api-process.js';

/** The p-th percentile, nearest rank: `pct(xs, 50)` is the median of an odd count, the upper middle of an even one. */
export const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/** The median; of an even count, the mean of the two middle values. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The scripted OpenAI vendor (bench/gateway/vendor-server.ts) in its own process; `url` has no path. */
export async function startVendor(): Promise<{ url: string; pid: number; stop(): void }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'bench/gateway/vendor-server.ts'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve) =>
    proc.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())),
  );
  return { url, pid: proc.pid!, stop: () => proc.kill('SIGTERM') };
}

export interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  model: string;
  /** The server process behind the URL, for CPU per request. */
  pid?: number;
}

/** The request every target gets: a short OpenAI chat completion. */
export const body = (model: string, stream: boolean) =>
  JSON.stringify({
    model,
    messages: [{ role: 'user', content: 'Say hello.' }],
    max_tokens: 16,
    ...(stream ? { stream: true } : {}),
  });

export interface SequentialResult {
  /** Per-request times from performance.now(), ms. */
  p50: number;
  p99: number;
  /** Time per request from the loop's rate (elapsed / count), ms: no timer resolution in it. */
  perRequest: number;
}

/** `count` requests one after the other, after `warmup` unmeasured ones; each must answer 200. */
export async function sequential(
  t: Target,
  stream: boolean,
  count: number,
  warmup = 100,
): Promise<SequentialResult> {
  const times: number[] = [];
  const payload = body(t.model, stream);
  let started = 0;
  for (let i = 0; i < count + warmup; i++) {
    if (i === warmup) started = performance.now();
    const t0 = performance.now();
    const res = await fetch(t.url, { method: 'POST', headers: t.headers, body: payload });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${t.name}: HTTP ${res.status}`);
    if (i >= warmup) times.push(performance.now() - t0);
  }
  return {
    p50: pct(times, 50),
    p99: pct(times, 99),
    perRequest: (performance.now() - started) / Math.max(1, count),
  };
}

/** This process's CPU seconds (autocannon generates the load in it). */
const ownCpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

export interface LoadOptions {
  connections: number;
  seconds: number;
  /** The vendor's process: its CPU is part of a gateway target's all-CPU total. */
  vendorPid?: number;
}

export interface LoadResult {
  rps: number;
  /** Non-2xx answers, errors and timeouts. */
  errors: number;
  /** The target server's CPU per request, µs. */
  cpuUs: number;
  /** Of which the target's main thread, µs. */
  mainUs: number;
  /** Postgres's CPU per request, µs. */
  pgUs: number;
  /**
   * All the CPU a request costs on this machine, µs: the target, Postgres,
   * the vendor behind a gateway and the load generator. On saturated cores
   * throughput is about cores / this, and it moves far less with other
   * load on the machine than req/s does.
   */
  totalUs: number;
}

/** An autocannon cell against one target, with CPU per request from /proc. */
export async function load(t: Target, stream: boolean, opts: LoadOptions): Promise<LoadResult> {
  const vendorPid = opts.vendorPid && opts.vendorPid !== t.pid ? opts.vendorPid : 0;
  const cpu0 = t.pid ? cpuSeconds(t.pid) : 0;
  const main0 = t.pid ? mainThreadCpuSeconds(t.pid) : 0;
  const pg0 = postgresCpuSeconds();
  const vendor0 = vendorPid ? cpuSeconds(vendorPid) : 0;
  const own0 = ownCpuSeconds();
  const r = await autocannon({
    url: t.url,
    method: 'POST',
    headers: t.headers,
    body: body(t.model, stream),
    connections: opts.connections,
    duration: opts.seconds,
  });
  const n = Math.max(1, r.requests.total);
  const cpu = t.pid ? cpuSeconds(t.pid) - cpu0 : 0;
  const pg = postgresCpuSeconds() - pg0;
  const vendor = vendorPid ? cpuSeconds(vendorPid) - vendor0 : 0;
  return {
    rps: r.requests.average,
    errors: r.non2xx + r.errors + r.timeouts,
    cpuUs: (cpu * 1e6) / n,
    mainUs: t.pid ? ((mainThreadCpuSeconds(t.pid) - main0) * 1e6) / n : 0,
    pgUs: (pg * 1e6) / n,
    totalUs: ((cpu + pg + vendor + (ownCpuSeconds() - own0)) * 1e6) / n,
  };
}

/**
 * Node flags of a benchmarked API process: BENCH_API_NODE_ARGS, else those of
 * package.json's `api` script (its V8 heap cap).
 */
export function apiNodeArgs(): string[] {
  return (
    process.env.BENCH_API_NODE_ARGS ??
    /\bnode (.*?)\s*--import tsx api\/server\.ts/.exec(
      (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { api: string } })
        .scripts.api,
    )?.[1] ??
    ''
  )
    .split(' ')
    .filter(Boolean);
}

/** The vendor's API key as the gateway's provider holds it (the scripted vendor takes any bearer token). */
export const VENDOR_KEY = 'sk-bench-vendor-key-0000000000';
/** Our gateway's model name for the vendor's `gpt-4o-mini` (priced in core/metering/pricing.ts). */
export const GATEWAY_MODEL = 'bench/gpt-4o-mini';
/** Our gateway's OpenAI chat completions path. */
export const GATEWAY_PATH = '/api/gateway/openai/v1/chat/completions';

/**
 * Through the configuration API of the server at `apiUrl`: a provider `bench`
 * (OpenAI type) for the vendor at `vendorUrl`, a key with no limits, and a key
 * with a rate limit and a monthly budget too generous ever to refuse during
 * a bench (so every call reserves and settles against them).
 */
export async function setupGatewayKeys(
  apiUrl: string,
  vendorUrl: string,
): Promise<{ plain: string; limited: string }> {
  const post = (route: string, payload: unknown) => postConfig(apiUrl, route, payload);
  const provider = await post('/providers', {
    name: 'bench',
    provider_type: 'openai',
    base_url: `${vendorUrl}/v1`,
    api_key: VENDOR_KEY,
  });
  const grants = [{ provider_id: provider.id, model_names: ['*'] }];
  const plain = await post('/virtual-keys', { name: 'plain', providers: grants });
  const limited = await post('/virtual-keys', {
    name: 'limited',
    providers: grants,
    rate_limit: { requests_per_minute: 10_000_000, tokens_per_minute: 1_000_000_000 },
    budget: { max_usd: 1_000_000, period: 'month' },
  });
  return { plain: plain.secret_key!, limited: limited.secret_key! };
}
