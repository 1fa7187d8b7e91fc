/**
 * Sandbox operations are spans (ensure with `sandbox.created`, each command
 * with its exit code, each file operation) in the caller's trace, and the
 * daemon writes that trace id into its log line for the request. Uses the
 * process backend, so it needs no Docker; this file installs its own tracer
 * provider (vitest runs it in a process of its own).
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProcessSandboxManager } from '../../../activities/sandbox/process/manager.js';
import { loadSandboxConfig } from '../../../activities/sandbox/sandbox-config.js';
import { sandboxName } from '../../../activities/sandbox/sandbox-manager.js';
import { newSession, repoRoot, silentLogger, TEST_SECRET } from './docker-harness.js';

describe('sandbox spans and trace ids', () => {
  const exporter = new InMemorySpanExporter();
  let dir: string;
  let manager: ProcessSandboxManager;

  beforeAll(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(
      new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }),
    );
    execFileSync(process.execPath, [path.join(repoRoot, 'sandbox-daemon/bundle.mjs')], { stdio: 'ignore' });
    dir = await mkdtemp(path.join(os.tmpdir(), 'sbx-spans-'));
    manager = new ProcessSandboxManager(
      loadSandboxConfig({ SANDBOX_ENABLED: 'true', SANDBOX_BACKEND: 'process', DATA_DIR: dir }),
      silentLogger,
      TEST_SECRET,
    );
  });
  afterAll(async () => {
    for (const info of await manager.list()) await manager.destroy(info.session);
    await rm(dir, { recursive: true, force: true });
  });

  it('records ensure, exec and file spans under the caller, and the daemon logs its trace id', async () => {
    const session = newSession();
    const parent = trace.getTracer('test').startSpan('agent turn');
    const traceId = parent.spanContext().traceId;
    await context.with(trace.setSpan(context.active(), parent), async () => {
      await manager.ensure(session);
      await manager.ensure(session);
      expect((await manager.exec(session, { command: 'echo hi; exit 3' })).exit_code).toBe(3);
      await manager.writeFile(session, 'notes/a.txt', 'content');
      expect((await manager.readFile(session, 'notes/a.txt')).toString()).toBe('content');
      await manager.deleteFile(session, 'notes/a.txt');
    });
    parent.end();

    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    const named = (n: string) => spans.filter((s) => s.name === n);
    const ensures = named('sandbox.ensure');
    expect(ensures.map((s) => s.attributes['sandbox.created']).sort()).toEqual([false, true]);
    const exec = named('sandbox.exec');
    expect(exec).toHaveLength(1);
    expect(exec[0]!.attributes).toMatchObject({
      'sandbox.exit_code': 3,
      'sandbox.timed_out': false,
      'sandbox.command.length': 15,
    });
    expect(JSON.stringify(exec[0]!.attributes)).not.toContain('echo hi');
    for (const op of ['write', 'read', 'delete']) {
      expect(named(`sandbox.file.${op}`)[0]?.attributes['sandbox.file.path']).toBe('notes/a.txt');
    }

    // The daemon logs a request when its response has closed: the last line may trail the answer.
    const requestLines = async () =>
      (await readFile(path.join(dir, 'sandboxes', sandboxName(session), 'daemon.log'), 'utf8'))
        .trim()
        .split('\n')
        // Node's own warnings (`(node:123) …`) share the stream with the daemon's JSON lines.
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.msg === 'request' && l.path !== '/health');
    let requests = await requestLines();
    for (let i = 0; i < 50 && requests.length < 4; i++) {
      await new Promise((r) => setTimeout(r, 100));
      requests = await requestLines();
    }
    expect(requests.length).toBeGreaterThanOrEqual(4);
    for (const line of requests) expect(line.trace_id).toBe(traceId);
  });

  it('marks a re-sent execution that attached to the first one as reused', async () => {
    const session = newSession();
    const parent = trace.getTracer('test').startSpan('retried tool call');
    const traceId = parent.spanContext().traceId;
    await context.with(trace.setSpan(context.active(), parent), async () => {
      await manager.exec(session, { command: 'echo once', id: 'run:1:call' });
      await manager.exec(session, { command: 'echo once', id: 'run:1:call', attachOnly: true });
    });
    parent.end();
    const execs = exporter
      .getFinishedSpans()
      .filter((s) => s.spanContext().traceId === traceId && s.name === 'sandbox.exec');
    expect(execs.map((s) => s.attributes['sandbox.exec.reused'])).toEqual([undefined, true]);
  });
});
