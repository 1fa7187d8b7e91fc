import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { startWorker, type RunningWorker } from '../../../activities/worker.js';
import { loadConfig } from '../../../core/config.js';
import { createDb, type Db } from '../../../core/db/knex.js';
import { createLogger } from '../../../core/logger.js';
import { loadSandboxConfig } from '../../../activities/sandbox/sandbox-config.js';
import { startTestApi, type Envelope, type TestApi } from '../../helpers/api.js';
import { createModel, createProvider } from '../../helpers/factories/config.js';
import { createPrompt } from '../../helpers/factories/content.js';
import { createProject, uniqueName } from '../../helpers/factories.js';
import { databaseUrl, temporalAddress } from '../../helpers/services.js';
import { startOpenAiVendor } from '../../fixtures/vendors/openai.js';
import type { ScriptedVendor } from '../../fixtures/vendors/scripted-server.js';

export const CONVERSE = '/api/agent-server/converse';

export interface RunData {
  run_id: string;
  conversation_id: string;
  thread_id: string;
  message_id: string;
  status: string;
  output: { role: string; content: string; structured?: unknown } | null;
  tool_calls: Array<Record<string, unknown>>;
  usage: { input_tokens: number; output_tokens: number };
  error: { code: string; message: string; details?: unknown } | null;
  warnings: string[];
  prompt_version_id: string | null;
  trace_id: string | null;
  workflow_id: string;
  temporal_ui_url: string | null;
}

export interface SseEvent {
  id: number;
  event: string;
  data: Record<string, unknown>;
  /** performance.now() when the frame was parsed. */
  at: number;
}

/** Environment shared by the API and the worker (same secrets key, same task queue). */
export function sessionEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl(),
    TEMPORAL_ADDRESS: temporalAddress() ?? '127.0.0.1:1',
    SECRETS_KEY: randomBytes(32).toString('base64'),
    TEMPORAL_TASK_QUEUE: `sessions-test-${randomUUID()}`,
    SESSION_MODEL_HEARTBEAT_TIMEOUT_MS: '3000',
    LOG_LEVEL: 'warn',
    // Every trace stored, as tests look at spans (agent turns would be anyway).
    OTEL_TRACES_SAMPLER: 'parentbased_always_on',
    ...extra,
  };
}

/** A worker in this process (fast), sharing the run's Temporal dev server. */
export async function startInProcessWorker(
  env: Record<string, string>,
): Promise<{ db: Db; worker: RunningWorker; stop(): Promise<void> }> {
  const config = loadConfig({ ...env, PORT: '0' });
  const db = createDb(config.databaseUrl!);
  // The sandbox only when the test's environment asks for it (SANDBOX_ENABLED and friends).
  const worker = await startWorker(config, createLogger('error'), db, {
    sandboxConfig: loadSandboxConfig(env.SANDBOX_ENABLED ? env : {}),
  });
  return {
    db,
    worker,
    async stop() {
      await worker.shutdown();
      await db.destroy();
    },
  };
}

/** A worker as its own OS process (`npm run worker`'s command), for crash tests. */
export async function spawnWorker(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'activities/worker.ts'], {
    env: { ...process.env, ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const deadline = Date.now() + 60_000;
  while (!out.includes('worker running')) {
    if (child.exitCode !== null) throw new Error(`worker exited early: ${out}`);
    if (Date.now() > deadline) throw new Error(`worker did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, output: () => out };
}

export async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

export interface Fixture {
  api: TestApi;
  vendor: ScriptedVendor;
  projectId: string;
  providerId: string;
  modelId: string;
  env: Record<string, string>;
  /** An agent (with a fresh prompt "You are {{role}}.") plus whatever fields are given. */
  agent(
    fields?: Record<string, unknown>,
    template?: string,
    promptFields?: Record<string, unknown>,
  ): Promise<{ id: string; promptId: string; promptName: string }>;
  converse(
    body: Record<string, unknown>,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: Envelope<RunData>; text: string }>;
  stream(body: Record<string, unknown>, onEvent?: (ev: SseEvent) => void): Promise<SseEvent[]>;
  close(): Promise<void>;
}

export async function startFixture(env: Record<string, string>, api?: TestApi): Promise<Fixture> {
  const theApi = api ?? (await startTestApi(env));
  const vendor = await startOpenAiVendor();
  const project = await createProject(theApi);
  const provider = await createProvider(theApi, { provider_type: 'openai', base_url: `${vendor.url}/v1` });
  const model = await createModel(theApi, project.id, { provider_id: provider.id, model_id: 'gpt-test' });
  const fixture: Fixture = {
    api: theApi,
    vendor,
    projectId: project.id,
    providerId: provider.id,
    modelId: model.id,
    env,
    async agent(fields = {}, template = 'You are {{role}}.', promptFields = {}) {
      const prompt = await createPrompt(theApi, project.id, { template, ...promptFields });
      const res = await theApi.request<{ id: string }>(
        'POST',
        `/api/agent-server/agents?project_id=${project.id}`,
        {
          name: uniqueName('agent'),
          model_id: model.id,
          prompt_id: prompt.id,
          ...fields,
        },
      );
      if (res.status !== 200) throw new Error(`agent create failed: ${res.text}`);
      return { id: res.body.data.id, promptId: prompt.id, promptName: prompt.name };
    },
    async converse(body, headers = {}) {
      const res = await theApi.request<RunData>(
        'POST',
        `${CONVERSE}?project_id=${project.id}`,
        body,
        headers,
      );
      return { status: res.status, body: res.body, text: res.text };
    },
    async stream(body, onEvent) {
      return readSse(
        `${theApi.url}${CONVERSE}?project_id=${project.id}`,
        { method: 'POST', body: { ...body, stream: true } },
        onEvent,
      );
    },
    async close() {
      await vendor.close();
      if (!api) await theApi.close();
    },
  };
  return fixture;
}

/** Reads an SSE response to its end, parsing `id:`/`event:`/`data:` frames as they arrive. */
export async function readSse(
  url: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal },
  onEvent?: (ev: SseEvent) => void,
): Promise<SseEvent[]> {
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers: { ...(init.body ? { 'content-type': 'application/json' } : {}), ...init.headers },
    ...(init.body ? { body: JSON.stringify(init.body) } : {}),
    ...(init.signal ? { signal: init.signal } : {}),
  });
  if (!res.headers.get('content-type')?.startsWith('text/event-stream'))
    throw new Error(`not an event stream: ${res.status} ${await res.text()}`);
  const events: SseEvent[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let idx: number;
    while ((idx = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, idx);
      buffer = buffer.slice(idx + 2);
      if (frame.startsWith(':')) continue;
      const ev: Partial<SseEvent> = {};
      for (const line of frame.split('\n')) {
        const [k, ...rest] = line.split(': ');
        const v = rest.join(': ');
        if (k === 'id') ev.id = Number(v);
        else if (k === 'event') ev.event = v;
        else if (k === 'data') ev.data = JSON.parse(v) as Record<string, unknown>;
      }
      const full = { ...ev, at: performance.now() } as SseEvent;
      events.push(full);
      onEvent?.(full);
    }
  }
  return events;
}

/** Messages the scripted vendor received in request `i`, as role/content pairs (system included). */
export function sentMessages(vendor: ScriptedVendor, i: number): Array<{ role: string; content: unknown }> {
  const body = vendor.received[i]?.body as {
    messages?: Array<{ role: string; content: unknown; tool_calls?: unknown }>;
  };
  return (body.messages ?? []).map((m) => ({ role: m.role, content: m.content }));
}

export async function waitFor<T>(
  fn: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 20_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export interface SessionWorld {
  fx: Fixture;
  /** A Temporal client of its own, for what an operator would look at (describe, history, queries). */
  client: Client;
  /** Stops the block's worker (e.g. to show another one takes over). */
  stopWorker(): Promise<void>;
  /** Starts the block's worker again if it was stopped. */
  restartWorker(): Promise<void>;
}

/**
 * For one describe block: the API and scripted vendor, an in-process worker on
 * a task queue of its own, and a Temporal client; the vendor's record is reset
 * before each test. Call it inside the describe callback.
 */
export function useSessionWorld(extraEnv: Record<string, string> = {}): SessionWorld {
  const world = {} as SessionWorld;
  let worker: Awaited<ReturnType<typeof startInProcessWorker>> | undefined;
  let connection: Connection | undefined;
  world.stopWorker = async () => {
    await worker?.stop();
    worker = undefined;
  };
  world.restartWorker = async () => {
    worker ??= await startInProcessWorker(world.fx.env);
  };
  beforeAll(async () => {
    const env = sessionEnv(extraEnv);
    world.fx = await startFixture(env);
    worker = await startInProcessWorker(env);
    connection = await Connection.connect({ address: temporalAddress()! });
    world.client = new Client({ connection });
  });
  afterAll(async () => {
    await worker?.stop();
    await world.fx?.close();
    await connection?.close();
  });
  beforeEach(() => world.fx.vendor.reset());
  return world;
}

/**
 * `useSessionWorld` with the process sandbox backend (commands run as local
 * processes, no Docker needed): the daemon bundle is built first, and the
 * sandboxes' data folder (`dataDir`, named after `name`) is removed at the end.
 * Call it inside the describe callback.
 */
export function useProcessSandboxWorld(name: string): SessionWorld & { dataDir: string } {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `${name}-`));
  beforeAll(() => {
    execFileSync(
      process.execPath,
      [path.resolve(import.meta.dirname, '../../../sandbox-daemon/bundle.mjs')],
      {
        stdio: 'ignore',
      },
    );
  });
  const world = useSessionWorld({
    SANDBOX_ENABLED: 'true',
    SANDBOX_BACKEND: 'process',
    DATA_DIR: dataDir,
    SANDBOX_IDLE_TIMEOUT_MS: '60000',
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));
  return Object.assign(world, { dataDir });
}
