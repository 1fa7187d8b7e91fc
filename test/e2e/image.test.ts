/**
 * The server image (`npm run image`), run as the Helm chart runs it
 * (image-harness.ts): `migrate` into an empty database, then `api` (readiness,
 * the console's files) and `worker` (a converse turn through the api against
 * the scripted vendor), both stopping cleanly on SIGTERM. Also what the image
 * holds: uid 1000, no dev dependencies, `sleep` for the api's preStop hook, no
 * bash or package manager, and a size bound.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, migrateLatest } from '../../core/db/knex.js';
import { startOpenAiVendor } from '../fixtures/vendors/openai.js';
import type { ScriptedVendor } from '../fixtures/vendors/scripted-server.js';
import { freePort } from '../helpers/ports.js';
import { createScratchDatabase } from '../helpers/scratch-db.js';
import { noTemporal, temporalAddress } from '../helpers/services.js';
import { buildImage, Containers, docker, dockerUnavailable, IMAGE, ROOT, waitFor } from './image-harness.js';

/** 296 MB when written: Node's binary 127, production node_modules 152, the Debian cut 15, the app 3. */
const MAX_IMAGE_BYTES = 340_000_000;

/** Lists every installed package path (`node_modules/a/node_modules/b`), as package-lock.json names them. */
const LIST_IMAGE = `
const fs = require('fs');
const found = [];
const walk = (dir, prefix) => {
  for (const entry of fs.readdirSync(dir)) {
    if (entry.startsWith('.')) continue;
    const names = entry.startsWith('@') ? fs.readdirSync(dir + '/' + entry).map((n) => entry + '/' + n) : [entry];
    for (const name of names) {
      found.push(prefix + 'node_modules/' + name);
      const nested = dir + '/' + name + '/node_modules';
      if (fs.existsSync(nested)) walk(nested, prefix + 'node_modules/' + name + '/');
    }
  }
};
walk('/app/node_modules', '');
const exists = (p) => fs.existsSync(p);
console.log(JSON.stringify({
  uid: process.getuid(), gid: process.getgid(), packages: found,
  binaries: Object.fromEntries(['/usr/bin/sleep', '/bin/sh', '/bin/bash', '/usr/bin/apt', '/usr/bin/dpkg'].map((b) => [b, exists(b)])),
}));`;

const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { dev?: boolean }>;
};
const devOnly = new Set(Object.keys(lock.packages).filter((p) => p && lock.packages[p]!.dev));

const unavailable = (await dockerUnavailable()) !== undefined;

describe.skipIf(unavailable || noTemporal())('the server image, run as the Helm chart runs it', () => {
  const containers = new Containers();
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>> | undefined;
  let databaseUrl: string;
  let env: Record<string, string>;
  let vendor: ScriptedVendor;
  let api: { name: string; url: string };
  let worker: { name: string; metricsUrl: string };

  beforeAll(async () => {
    console.log(await buildImage());
    scratch = await createScratchDatabase('agent_image');
    databaseUrl = scratch.url;
    vendor = await startOpenAiVendor();
    env = {
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress()!,
      // The run's dev server is shared: this worker must take only this test's sessions.
      TEMPORAL_TASK_QUEUE: `image-test-${randomUUID()}`,
      SECRETS_KEY: randomBytes(32).toString('base64'),
      HOST: '127.0.0.1',
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'info',
    };
  }, 16 * 60_000);

  afterAll(async () => {
    await containers.removeAll();
    await vendor?.close();
    await scratch?.drop();
  }, 120_000);

  it('runs as uid 1000, holds no dev dependency and no shell beyond sh, and stays under its size bound', async () => {
    const inspect = await docker(['image', 'inspect', IMAGE, '--format', '{{.Config.User}} {{.Size}}']);
    const [user, size] = inspect.stdout.trim().split(' ');
    expect(user).toBe('1000:1000');
    console.log(`server image: ${(Number(size) / 1e6).toFixed(0)} MB (bound ${MAX_IMAGE_BYTES / 1e6} MB)`);
    expect(Number(size)).toBeLessThan(MAX_IMAGE_BYTES);

    const listed = await containers.node(LIST_IMAGE);
    expect(listed.code, listed.stderr).toBe(0);
    const seen = JSON.parse(listed.stdout) as {
      uid: number;
      gid: number;
      packages: string[];
      binaries: Record<string, boolean>;
    };
    expect([seen.uid, seen.gid]).toEqual([1000, 1000]);
    expect(seen.packages).toContain('node_modules/knex');
    expect(seen.packages).not.toContain('node_modules/vitest');
    expect(seen.packages.filter((p) => devOnly.has(p))).toEqual([]);
    // `sleep` is the api's preStop hook; sh runs the entrypoint; nothing else to log in with.
    expect(seen.binaries).toEqual({
      '/usr/bin/sleep': true,
      '/bin/sh': true,
      '/bin/bash': false,
      '/usr/bin/apt': false,
      '/usr/bin/dpkg': false,
    });
  });

  it('migrate: applies every migration to an empty database, under the names the tsx-run code records', async () => {
    const first = await containers.run('migrate', { DATABASE_URL: databaseUrl });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^applied: /);
    const db = createDb(databaseUrl);
    try {
      const rows = await db('knex_migrations').select('name').orderBy('id');
      const sources = readdirSync(path.join(ROOT, 'migrations')).filter((f) => /^\d{14}_\w+\.ts$/.test(f));
      expect(rows.map((r: { name: string }) => r.name)).toEqual(sources.sort());
      expect(await migrateLatest(db)).toEqual([]);
    } finally {
      await db.destroy();
    }
    const again = await containers.run('migrate', { DATABASE_URL: databaseUrl });
    expect(again.stdout.trim()).toBe('already up to date');
  });

  it('api: ready against PostgreSQL and Temporal, serving the console; `sleep` runs for the preStop hook', async () => {
    const port = await freePort();
    api = {
      name: await containers.start('api', { ...env, PORT: String(port) }),
      url: `http://127.0.0.1:${port}`,
    };
    const logs = () => containers.logs(api.name);
    const ready = await waitFor(
      'the api to be ready',
      async () => {
        const res = await fetch(`${api.url}/api/agent-server/health/ready`);
        return res.status === 200 ? ((await res.json()) as { data: { status: string } }) : undefined;
      },
      logs,
    );
    expect(ready.data.status).toBe('ready');

    const index = await fetch(`${api.url}/console/`);
    expect(index.status).toBe(200);
    const html = await index.text();
    expect(html).toBe(readFileSync(path.join(ROOT, 'console/dist/index.html'), 'utf8'));
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    // Read whole: a response left unread holds its connection busy, and the api's graceful stop
    // waits for busy connections up to SHUTDOWN_TIMEOUT_MS (as long as `docker stop` waits below).
    const asset = await fetch(`${api.url}${script}`);
    expect(asset.status).toBe(200);
    expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(0);

    const preStop = await docker(['exec', api.name, 'sleep', '0']);
    expect(preStop.code, preStop.stderr).toBe(0);
  });

  it('worker: connects to Temporal and completes a converse turn against the scripted vendor', async () => {
    const metricsPort = await freePort();
    worker = {
      name: await containers.start('worker', { ...env, WORKER_METRICS_PORT: String(metricsPort) }),
      metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    };
    const logs = () => containers.logs(worker.name);
    await waitFor(
      'the worker to poll',
      async () => ((await logs()).includes('worker running') ? true : undefined),
      logs,
    );
    const metrics = await fetch(worker.metricsUrl);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('agent_server_');

    const post = async <T>(pathname: string, body: unknown): Promise<T> => {
      const res = await fetch(`${api.url}/api/agent-server${pathname}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`POST ${pathname}: ${res.status} ${text}`);
      return (JSON.parse(text) as { data: T }).data;
    };
    const project = await post<{ id: string }>('/projects', { name: `image-${randomUUID().slice(0, 8)}` });
    const q = `?project_id=${project.id}`;
    const provider = await post<{ id: string }>('/providers', {
      name: `image-${randomUUID().slice(0, 8)}`,
      provider_type: 'openai',
      base_url: `${vendor.url}/v1`,
      api_key: 'sk-image-test',
    });
    const model = await post<{ id: string }>(`/models${q}`, {
      name: 'fast',
      model_id: 'gpt-test',
      provider_type: 'openai',
      provider_id: provider.id,
    });
    const prompt = await post<{ id: string }>(`/prompts${q}`, {
      name: 'p',
      template: 'You are brief.',
      commit_message: 'first',
    });
    const agent = await post<{ id: string }>(`/agents${q}`, {
      name: 'image-agent',
      model_id: model.id,
      prompt_id: prompt.id,
    });
    vendor.script({ reply: { text: 'Answered from the image', usage: { input: 7, output: 4 } } });
    const turn = await post<{ status: string; output: { content: string } | null }>(`/converse${q}`, {
      agent_id: agent.id,
      conversation_id: 'image-1',
      message: 'Are you running in a container?',
    });
    expect(turn.status).toBe('completed');
    expect(turn.output?.content).toBe('Answered from the image');
    expect(vendor.received.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(1);
  });

  it('api and worker stop on SIGTERM with exit code 0 (node is the main process)', async () => {
    for (const name of [worker.name, api.name]) {
      const stopped = await docker(['stop', '--time', '30', name], 60_000);
      expect(stopped.code, stopped.stderr).toBe(0);
      const state = await docker(['inspect', name, '--format', '{{.State.ExitCode}} {{.State.OOMKilled}}']);
      expect(state.stdout.trim(), await containers.logs(name)).toBe('0 false');
    }
  });
});
