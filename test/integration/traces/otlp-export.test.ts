import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentTelemetry } from '../../../core/telemetry/telemetry.js';
import { startTestApi, type TestApi } from '../../helpers/api.js';

interface OtlpJson {
  resourceSpans: Array<{
    resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
    scopeSpans: Array<{ spans: Array<{ traceId: string; name: string; kind: number }> }>;
  }>;
}

/** A minimal OTLP/HTTP receiver (JSON encoding, what exporter-trace-otlp-http sends). */
async function startReceiver(): Promise<{
  url: string;
  server: Server;
  bodies: OtlpJson[];
  paths: string[];
}> {
  const bodies: OtlpJson[] = [];
  const paths: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpJson);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, bodies, paths };
}

describe('OTLP/HTTP export', () => {
  const service = `test-otlp-${randomUUID()}`;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let api: TestApi;

  beforeAll(async () => {
    receiver = await startReceiver();
    api = await startTestApi({ OTEL_SERVICE_NAME: service, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
  });
  afterAll(async () => {
    await api?.close();
    receiver?.server.close();
  });

  it('sends every request span to the collector too, under the service name', async () => {
    const res = await api.request('GET', `/api/agent-server/projects/${randomUUID()}`);
    const traceId = res.headers.get('x-trace-id')!;
    await currentTelemetry()!.flush();
    expect(receiver.paths[0]).toMatch(/^POST \/v1\/traces application\/json/);
    const received = receiver.bodies.flatMap((b) =>
      b.resourceSpans.flatMap((rs) =>
        rs.scopeSpans.flatMap((ss) =>
          ss.spans.map((s) => ({
            ...s,
            service: rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue,
          })),
        ),
      ),
    );
    const mine = received.filter((s) => s.traceId === traceId);
    expect(mine.map((s) => s.name)).toContain('GET /api/agent-server/projects/{id}');
    expect(mine.length).toBeGreaterThanOrEqual(2); // the server span and its query
    expect(new Set(mine.map((s) => s.service))).toEqual(new Set([service]));
    expect(currentTelemetry()!.stats().exporters.otlp).toMatchObject({ dropped: 0, failed: 0 });
  });
});
