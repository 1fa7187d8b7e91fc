/**
 * The agent's MCP tool library (activities/tools/mcp-tools.ts) against real
 * servers: the reference server-everything over Streamable HTTP and SSE, and
 * our authenticated fixture server (two tenants exposing the same tool name).
 * Server rows go through the repositories with real encryption; this file
 * installs its own tracer provider (vitest runs it in a process of its own).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpConnectionError } from '../../core/mcp/errors.js';
import {
  callMcpTool,
  listAgentMcpTools,
  type AgentMcpEntry,
  type McpToolDeps,
  type OfferedMcpTool,
} from '../../activities/tools/mcp-tools.js';
import { TOOL_NAME_PATTERN } from '../../activities/tools/tool-names.js';
import { SecretBox } from '../../core/crypto/secrets.js';
import { createDb, type Db } from '../../core/db/knex.js';
import { McpServersRepository } from '../../core/repositories/mcp-servers.repository.js';
import { ProjectsRepository } from '../../core/repositories/projects.repository.js';
import { uniqueName } from '../helpers/factories.js';
import { databaseUrl } from '../helpers/services.js';
import {
  startAuthenticatedMcpServer,
  startEverythingServer,
  type RunningMcp,
} from '../fixtures/mcp-servers.js';

const entry = (id: string, tool_filters: string[] = [], tools_requiring_approval: string[] = []) =>
  ({ mcp_server_id: id, tool_filters, tools_requiring_approval }) satisfies AgentMcpEntry;

describe('agent MCP tools', () => {
  const exporter = new InMemorySpanExporter();
  let db: Db;
  let deps: McpToolDeps;
  let projectId: string;
  let otherProjectId: string;
  let http: RunningMcp;
  let sse: RunningMcp;
  let acme: RunningMcp & { seen: string[] };
  let globex: RunningMcp & { seen: string[] };
  const acmeToken = `tok-acme-${randomUUID()}`;
  const globexToken = `tok-globex-${randomUUID()}`;
  /** server ids by role */
  const ids: Record<string, string> = {};
  const names: Record<string, string> = {};

  async function addServer(
    role: string,
    endpoint: string,
    transport: 'streamable_http' | 'sse' = 'streamable_http',
    headers: Record<string, string> = {},
    project = projectId,
  ): Promise<string> {
    const row = await new McpServersRepository(db).insert({
      project_id: project,
      name: uniqueName(role),
      endpoint,
      transport,
      headers_enc: deps.secrets.encryptJson(headers),
    });
    ids[role] = row.id;
    names[role] = row.name;
    return row.id;
  }

  beforeAll(async () => {
    trace.setGlobalTracerProvider(
      new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }),
    );
    db = createDb(databaseUrl());
    deps = { db, secrets: new SecretBox(randomBytes(32)), publicUrl: 'http://127.0.0.1:6060' };
    const projects = new ProjectsRepository(db);
    projectId = (
      await projects.insert({ name: uniqueName('project'), description: null, virtual_key_id: null })
    ).id;
    otherProjectId = (
      await projects.insert({ name: uniqueName('project'), description: null, virtual_key_id: null })
    ).id;
    [http, sse, acme, globex] = await Promise.all([
      startEverythingServer('streamableHttp'),
      startEverythingServer('sse'),
      startAuthenticatedMcpServer({ token: acmeToken, tenant: 'acme', extraTools: true }),
      startAuthenticatedMcpServer({ token: globexToken, tenant: 'globex' }),
    ]);
    await addServer('http', http.url);
    await addServer('sse', sse.url, 'sse');
    await addServer('acme', acme.url, 'streamable_http', {
      Authorization: `Bearer ${acmeToken}`,
      'X-Tenant': 'acme',
    });
    await addServer('globex', globex.url, 'streamable_http', {
      Authorization: `Bearer ${globexToken}`,
      'X-Tenant': 'globex',
    });
    await addServer('wrong', acme.url, 'streamable_http', {
      Authorization: `Bearer wrong-${acmeToken}`,
      'X-Tenant': 'acme',
    });
    await addServer('down', 'http://127.0.0.1:9/mcp');
    await addServer('foreign', http.url, 'streamable_http', {}, otherProjectId);
  });
  afterAll(async () => {
    await Promise.all([http, sse, acme, globex].filter(Boolean).map((s) => s.stop()));
    await db.destroy();
  });

  const tool = (role: string, name: string) => ({
    server_id: ids[role]!,
    server_name: names[role]!,
    tool: name,
  });

  it.each(['http', 'sse'] as const)(
    'lists over %s with a filter, reporting filters that match nothing',
    async (role) => {
      const listing = await listAgentMcpTools(deps, projectId, [
        entry(ids[role]!, ['get-sum', 'echo', 'no-such-tool'], ['get-sum']),
      ]);
      // Offered in the server's order, not the filter's.
      expect(listing.tools.map((t) => t.name)).toEqual(['echo', 'get-sum']);
      const [server] = listing.servers;
      expect(server).toMatchObject({
        id: ids[role],
        name: names[role],
        transport: role === 'sse' ? 'sse' : 'streamable_http',
        filters: ['get-sum', 'echo', 'no-such-tool'],
        offered: ['echo', 'get-sum'],
        unmatched_filters: ['no-such-tool'],
      });
      expect(server?.listed).toEqual(
        expect.arrayContaining(['echo', 'get-sum', 'trigger-long-running-operation']),
      );
      expect(server?.renamed).toBeUndefined();
      expect(server?.error).toBeUndefined();
      const echo = listing.tools.find((t) => t.tool === 'echo')!;
      expect(echo).toMatchObject({
        server_id: ids[role],
        server_name: names[role],
        requires_approval: false,
      });
      expect(typeof echo.description).toBe('string');
      expect(echo.input_schema.type).toBe('object');
      expect(echo.input_schema.properties).toHaveProperty('message');
      expect(listing.tools.find((t) => t.tool === 'get-sum')?.requires_approval).toBe(true);
      // The listing is a small, plain activity result.
      expect(JSON.parse(JSON.stringify(listing))).toEqual(listing);
    },
  );

  it('offers every tool when the filter is empty', async () => {
    const listing = await listAgentMcpTools(deps, projectId, [entry(ids.sse!)]);
    const [server] = listing.servers;
    expect(server?.listed.length).toBeGreaterThan(5);
    expect(server?.offered).toEqual(server?.listed);
    expect(server?.unmatched_filters).toBeUndefined();
    for (const t of listing.tools) expect(t.name).toMatch(TOOL_NAME_PATTERN);
  });

  it('makes clashing names unique, deterministically, and maps them back to the right server', async () => {
    const entries = [entry(ids.acme!, [], ['whoami']), entry(ids.globex!)];
    const listing = await listAgentMcpTools(deps, projectId, entries);
    const again = await listAgentMcpTools(deps, projectId, entries);
    expect(again).toEqual(listing);

    const whoami = listing.tools.filter((t) => t.tool === 'whoami');
    expect(whoami).toHaveLength(2);
    const [a, g] = [
      whoami.find((t) => t.server_id === ids.acme),
      whoami.find((t) => t.server_id === ids.globex),
    ];
    expect(a?.name).toBe(`whoami__${names.acme}`);
    expect(g?.name).toBe(`whoami__${names.globex}`);
    expect(a?.requires_approval).toBe(true);
    expect(g?.requires_approval).toBe(false);
    expect(new Set(listing.tools.map((t) => t.name)).size).toBe(listing.tools.length);
    expect(listing.servers[0]?.renamed).toEqual({ whoami: a?.name });
    expect(listing.servers[1]?.renamed).toEqual({ whoami: g?.name });
    // acme's other tools do not clash and keep their names.
    expect(listing.servers[0]?.offered).toEqual(expect.arrayContaining(['fail', 'explode', a!.name]));

    // Mapping back: each renamed tool reaches its own server, with its own headers.
    const byName = (n: string) => listing.tools.find((t) => t.name === n) as OfferedMcpTool;
    expect(await callMcpTool(deps, byName(a!.name), { greeting: 'hi' })).toEqual({
      output: 'hi acme',
      isError: false,
    });
    expect(await callMcpTool(deps, byName(g!.name), { greeting: 'hi' })).toEqual({
      output: 'hi globex',
      isError: false,
    });
    expect(acme.seen.some((s) => s.includes(`Bearer ${acmeToken} acme`))).toBe(true);
    expect(globex.seen.some((s) => s.includes(`Bearer ${globexToken} globex`))).toBe(true);
  });

  it('skips reserved names and renames the same server listed over two transports', async () => {
    const listing = await listAgentMcpTools(
      deps,
      projectId,
      [entry(ids.http!, ['echo', 'get-sum']), entry(ids.sse!, ['echo'])],
      {
        reservedNames: ['execute_bash_commands', 'get-sum'],
      },
    );
    expect(listing.tools.map((t) => [t.name, t.server_id])).toEqual([
      [`echo__${names.http}`, ids.http],
      [`get-sum__${names.http}`, ids.http],
      [`echo__${names.sse}`, ids.sse],
    ]);
    const sseEcho = listing.tools[2]!;
    expect(await callMcpTool(deps, sseEcho, { message: 'over sse' })).toEqual({
      output: 'Echo: over sse',
      isError: false,
    });
  });

  it('reports a server that refuses the headers, is down, was deleted or belongs to another project, and goes on', async () => {
    const missing = randomUUID();
    const listing = await listAgentMcpTools(
      deps,
      projectId,
      [entry(ids.wrong!), entry(ids.down!), entry(missing), entry(ids.foreign!), entry(ids.globex!)],
      { timeoutMs: 5_000 },
    );
    expect(listing.tools.map((t) => t.name)).toEqual(['whoami']);
    const [wrong, down, deleted, foreign, ok] = listing.servers;
    expect(wrong).toMatchObject({ id: ids.wrong, name: names.wrong, listed: [], offered: [] });
    expect(wrong?.error).toMatch(/401/);
    expect(down?.error).toMatch(/ECONNREFUSED|fetch failed/);
    expect(deleted).toMatchObject({ id: missing, name: '', listed: [], offered: [] });
    expect(deleted?.error).toMatch(/no MCP server/);
    expect(foreign?.error).toMatch(/no MCP server/);
    expect(ok?.error).toBeUndefined();
    expect(JSON.stringify(listing)).not.toContain(acmeToken);
  });

  it('bounds a server that does not answer by the listing timeout', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer(() => undefined); // accepts, never answers
    silent.on('connection', (s) => sockets.add(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const id = await addServer('silent', `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`);
      // The silent server never answers: only the listing timeout can end this call.
      const listing = await listAgentMcpTools(deps, projectId, [entry(id), entry(ids.globex!)], {
        timeoutMs: 500,
      });
      expect(listing.servers[0]?.error).toMatch(/timed out/i);
      expect(listing.tools.map((t) => t.server_id)).toEqual([ids.globex]);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it.each(['http', 'sse'] as const)('round-trips echo and get-sum over %s', async (role) => {
    expect(await callMcpTool(deps, tool(role, 'echo'), { message: 'hello there' })).toEqual({
      output: 'Echo: hello there',
      isError: false,
    });
    expect(await callMcpTool(deps, tool(role, 'get-sum'), { a: 2, b: 40 })).toEqual({
      output: 'The sum of 2 and 40 is 42.',
      isError: false,
    });
  });

  it.each(['http', 'sse'] as const)(
    'passes progress on over %s, and progress resets the timeout',
    async (role) => {
      const progress: Array<{ progress: number; total?: number }> = [];
      // 8 steps of 150 ms: 1.2 s in all, but never 600 ms without progress.
      const result = await callMcpTool(
        deps,
        tool(role, 'trigger-long-running-operation'),
        { duration: 1.2, steps: 8 },
        { timeoutMs: 600, onProgress: (p) => progress.push(p) },
      );
      expect(result).toEqual({
        output: 'Long running operation completed. Duration: 1.2 seconds, Steps: 8.',
        isError: false,
      });
      // The SDK dispatches notifications a microtask later than responses, so the
      // last step's progress can lose to the result when both arrive in one chunk (SSE).
      expect(progress.length).toBeGreaterThanOrEqual(7);
      expect(progress.map((p) => p.progress)).toEqual([1, 2, 3, 4, 5, 6, 7, 8].slice(0, progress.length));
      expect(progress.every((p) => p.total === 8)).toBe(true);
    },
  );

  it('gives the model a readable error for isError results, throws, unknown tools and bad arguments', async () => {
    expect(await callMcpTool(deps, tool('acme', 'fail'), {})).toEqual({
      output: 'the widget of acme is broken',
      isError: true,
    });
    const exploded = await callMcpTool(deps, tool('acme', 'explode'), {});
    expect(exploded.isError).toBe(true);
    expect(exploded.output).toContain('kaboom in acme');
    const unknown = await callMcpTool(deps, tool('http', 'no-such-tool'), {});
    expect(unknown.isError).toBe(true);
    expect(unknown.output).toMatch(/no-such-tool.*not found/i);
    const invalid = await callMcpTool(deps, tool('http', 'get-sum'), { a: 'two' });
    expect(invalid.isError).toBe(true);
    expect(invalid.output).toMatch(/invalid|validation/i);
    expect(invalid.output).toMatch(/\ba\b/);
  });

  it('summarises images, inlines embedded resources, and falls back to structuredContent', async () => {
    const image = await callMcpTool(deps, tool('http', 'get-tiny-image'), {});
    expect(image.isError).toBe(false);
    expect(image.output).toMatch(
      /^Here's the image you requested:\n\[image image\/png, \d+ bytes\]\nThe image above/,
    );
    expect(image.output.length).toBeLessThan(300);
    const resource = await callMcpTool(deps, tool('sse', 'get-resource-reference'), { resourceId: 2 });
    expect(resource.output).toMatch(/\[resource \S+ text\/plain\]\n.+/);
    expect(await callMcpTool(deps, tool('acme', 'structured-only'), {})).toEqual({
      output: '{"tenant":"acme","ok":true}',
      isError: false,
      extras: { structured_content: { tenant: 'acme', ok: true } },
    });
    // A server echoing our credentials does not get them into the transcript; other headers stay.
    expect(await callMcpTool(deps, tool('acme', 'leak'), {})).toEqual({
      output: 'authorization=[redacted] tenant=acme',
      isError: false,
    });
    const cut = await callMcpTool(
      deps,
      tool('http', 'echo'),
      { message: 'x'.repeat(500) },
      { maxOutputChars: 100 },
    );
    expect(cut.output).toMatch(/^Echo: x{94}\n…\[truncated: 406 more characters\]$/);
  });

  it('answers a timeout as an error result mentioning it, and aborts on the signal', async () => {
    const slow = await callMcpTool(deps, tool('acme', 'slow'), { ms: 3_000 }, { timeoutMs: 300 });
    expect(slow.isError).toBe(true);
    expect(slow.output).toMatch(/timed out/);
    expect(slow.output).toContain('300 ms');

    const ac = new AbortController();
    const reason = new Error('activity cancelled');
    setTimeout(() => ac.abort(reason), 200);
    await expect(callMcpTool(deps, tool('acme', 'slow'), { ms: 3_000 }, { signal: ac.signal })).rejects.toBe(
      reason,
    );
  });

  it('throws McpConnectionError when the request cannot reach the server; a deleted server is not reached', async () => {
    await expect(callMcpTool(deps, tool('down', 'echo'), { message: 'x' })).rejects.toBeInstanceOf(
      McpConnectionError,
    );
    const refused = await callMcpTool(deps, tool('wrong', 'whoami'), {}).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(McpConnectionError);
    expect(String((refused as Error).message)).toMatch(/401/);
    expect(String((refused as Error).message)).not.toContain(acmeToken);

    const gone = await callMcpTool(deps, { server_id: randomUUID(), server_name: 'old', tool: 'echo' }, {});
    expect(gone).toEqual({
      output: 'the tool "echo" is unavailable: MCP server "old" no longer exists',
      isError: true,
      notReached: true,
    });
  });

  it('records a span per listing and per call, without header values', async () => {
    exporter.reset();
    await listAgentMcpTools(deps, projectId, [entry(ids.acme!), entry(ids.wrong!)]);
    await callMcpTool(deps, tool('acme', 'whoami'), {});
    await callMcpTool(deps, tool('acme', 'fail'), {});
    const spans = exporter.getFinishedSpans();
    const lists = spans.filter((s) => s.name === 'mcp.tools.list');
    expect(lists.map((s) => s.attributes['mcp.server.name']).sort()).toEqual(
      [names.acme, names.wrong].sort(),
    );
    expect(lists.find((s) => s.attributes['mcp.server.name'] === names.wrong)?.status.code).toBe(2);
    const calls = spans.filter((s) => s.name.startsWith('mcp.tools.call'));
    expect(calls.map((s) => [s.name, s.attributes['mcp.tool.is_error']])).toEqual([
      ['mcp.tools.call whoami', false],
      ['mcp.tools.call fail', true],
    ]);
    expect(calls[0]?.attributes).toMatchObject({
      'gen_ai.tool.name': 'whoami',
      'mcp.server.id': ids.acme,
      'mcp.server.name': names.acme,
      'mcp.transport': 'streamable_http',
    });
    expect(JSON.stringify(spans.map((s) => [s.attributes, s.events, s.status]))).not.toContain(acmeToken);
  });
});
