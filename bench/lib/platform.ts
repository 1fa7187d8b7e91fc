/**
 * The agent benches' platform: the Temporal dev server, a scratch database,
 * the API and a worker as their own processes (as deployed), and a project
 * with an agent on a scripted OpenAI-format model.
 */
import { type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { spawnTied } from '../../scripts/lib/children.js';
import { findTemporalCli, startTemporalDevServer } from '../../scripts/lib/temporal-dev-server.js';
import type { Db } from '../../core/db/knex.js';
import { freePort } from '../../test/helpers/ports.js';
import { ROOT, scratchDatabase, spawnServer, type Child, type SpawnOptions } from './scratch.js';

export interface Platform {
  /** The API's base URL. */
  url: string;
  /** The API's process (its pid for CPU time; with `probe`, its CPU profiles). */
  api: Child;
  /** What the API and the worker run with. */
  env: Record<string, string>;
  /** The scratch database (dropped by `stop`). */
  db: Db;
  temporalAddress: string;
  worker: ChildProcess;
  /** An API request; anything but a 200 throws with the answer. */
  call: <T>(method: string, path: string, body?: unknown) => Promise<T>;
  stop: () => Promise<void>;
}

/**
 * Starts the platform; `extraEnv` is added to the API's and the worker's
 * environment, `apiOptions` to how the API is spawned (e.g. `probe` to profile it).
 */
export async function startPlatform(
  name: string,
  extraEnv: Record<string, string> = {},
  apiOptions: SpawnOptions = {},
): Promise<Platform> {
  const cli = findTemporalCli();
  if (!cli) throw new Error('no temporal CLI: run scripts/install-temporal or set TEMPORAL_CLI_PATH');
  const temporal = await startTemporalDevServer({ cliPath: cli, port: await freePort() });
  const scratch = await scratchDatabase(`agent_bench_${name}`);
  const env = {
    DATABASE_URL: scratch.url,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: `bench-${randomUUID()}`,
    SECRETS_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'error',
    ...extraEnv,
  };
  const api = await spawnServer('api/server.ts', env, apiOptions);
  const worker = spawnTied(process.execPath, ['--import', 'tsx', 'activities/worker.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  }).child;
  await new Promise<void>((resolve) => {
    let out = '';
    worker.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('worker running')) resolve();
    });
  });
  return {
    url: api.url,
    api,
    env,
    db: scratch.db,
    temporalAddress: temporal.address,
    worker,
    call: async <T>(method: string, path: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${api.url}${path}`, {
        method,
        headers: body !== undefined ? { 'content-type': 'application/json' } : {},
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const json = (await res.json()) as { data: T };
      if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json.data;
    },
    stop: async () => {
      await api.stop();
      worker.kill('SIGTERM');
      await new Promise((r) => worker.once('exit', r));
      await temporal.stop();
      await scratch.drop();
    },
  };
}

/** A project with a model `gpt-bench` at `vendorUrl` (an OpenAI-format model) and a prompt; `model` adds fields. */
export async function benchProject(p: Platform, vendorUrl: string, model: Record<string, unknown> = {}) {
  const project = await p.call<{ id: string }>('POST', '/api/agent-server/projects', {
    name: `bench-${Date.now()}`,
  });
  const q = `?project_id=${project.id}`;
  const provider = await p.call<{ id: string }>('POST', '/api/agent-server/providers', {
    name: `bench-${Date.now()}`,
    provider_type: 'openai',
    base_url: `${vendorUrl}/v1`,
    api_key: `sk-bench-${randomBytes(12).toString('hex')}`,
  });
  const created = await p.call<{ id: string }>('POST', `/api/agent-server/models${q}`, {
    name: 'bench-model',
    model_id: 'gpt-bench',
    provider_type: 'openai',
    provider_id: provider.id,
    ...model,
  });
  const prompt = await p.call<{ id: string }>('POST', `/api/agent-server/prompts${q}`, {
    name: 'bench-prompt',
    template: 'You are a benchmark agent.',
    commit_message: 'v1',
  });
  return { projectId: project.id, q, providerId: provider.id, modelId: created.id, promptId: prompt.id };
}

/** `benchProject` with an agent on its model and prompt; `agent` adds fields. */
export async function benchAgent(
  p: Platform,
  vendorUrl: string,
  fields: { model?: Record<string, unknown>; agent?: Record<string, unknown> } = {},
) {
  const project = await benchProject(p, vendorUrl, fields.model);
  const agent = await p.call<{ id: string }>('POST', `/api/agent-server/agents${project.q}`, {
    name: 'bench-agent',
    model_id: project.modelId,
    prompt_id: project.promptId,
    ...fields.agent,
  });
  return { ...project, agentId: agent.id };
}
