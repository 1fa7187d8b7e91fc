/**
 * The trail's manners, on routes made for the test and mounted as the API
 * mounts its own: a streamed answer is recorded when its handler returns,
 * while the stream is still open (nothing buffered); a row that cannot be
 * written leaves the answer as it was and is logged; a handler that recorded
 * its own event gets no second, plainer row.
 */
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiRouter } from '../../../api/http/api-router.js';
import { BodyReader, requestBodies } from '../../../api/http/body-reader.js';
import { ok } from '../../../api/http/envelope.js';
import { openEventStream } from '../../../api/http/sse.js';
import { errorHandler } from '../../../api/middleware/error-handler.js';
import { requestContext } from '../../../api/middleware/request-id.js';
import { recordAudit } from '../../../core/audit/audit-log.js';
import type { Db } from '../../../core/db/knex.js';
import { createLogger } from '../../../core/logger.js';
import { startTestApi, type TestApi } from '../../helpers/api.js';
import { LogCapture } from '../../helpers/log-capture.js';

describe('the audit trail middleware', () => {
  let api: TestApi;
  let db: Db;
  const servers: Array<{ close(): void }> = [];
  /** A segment unique to this run: the rows' paths tell them from everyone else's. */
  const area = `trail-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    api = await startTestApi();
    db = api.server.deps.db;
  });
  afterAll(async () => {
    for (const s of servers) s.close();
    await api?.close();
  });

  /** Serves `router` as the API does (open mode), writing audit rows to `auditDb`. */
  const serve = async (router: ApiRouter, auditDb: Db, logs = new LogCapture()) => {
    const app = new Koa();
    app.use(requestContext(createLogger('info', logs)));
    const { maxBodyBytes, http } = api.config;
    app.use(
      requestBodies(
        new BodyReader({
          maxBytes: maxBodyBytes,
          inFlightMax: http.bodyBytesInFlightMax,
          idleTimeoutMs: http.bodyIdleTimeoutMs,
        }),
      ),
    );
    app.use(errorHandler());
    app.use(ApiRouter.mountAll([router], { access: { config: api.config, db: auditDb } }).routes());
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    servers.push(server);
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, logs };
  };
  const rowsAt = (path: string) =>
    db('audit_events').where({ path }).select<Array<{ action: string; status: number }>>('*');

  it('records a streamed answer when its handler returns, while the stream is still open', async () => {
    let finish: () => void = () => {};
    const router = new ApiRouter(`/api/agent-server/${area}`, 'Test')
      .access({ read: 'project:read', write: 'project:operate' })
      .route({ method: 'post', path: '/stream', summary: 'a stream' }, (ctx) => {
        const res = openEventStream(ctx);
        res.write('data: first\n\n');
        finish = () => res.end('data: last\n\n');
      });
    const { url } = await serve(router, db);
    const res = await fetch(`${url}/api/agent-server/${area}/stream`, { method: 'POST' });
    const reader = res.body!.getReader() as ReadableStreamDefaultReader<Uint8Array>;
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('first');
    // The stream is open (its handler returned): its row is written, a moment after the first event.
    const path = `/api/agent-server/${area}/stream`;
    for (let i = 0; i < 40 && (await rowsAt(path)).length === 0; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(await rowsAt(path)).toMatchObject([{ action: `${area.replace('-', '_')}.stream`, status: 200 }]);
    finish();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read())
      rest += new TextDecoder().decode(r.value);
    expect(rest).toContain('last');
  });

  it('answers as it would when the row cannot be written, and logs it', async () => {
    const router = new ApiRouter(`/api/agent-server/${area}`, 'Test')
      .access({ read: 'project:read', write: 'project:operate' })
      .route({ method: 'post', path: '/things', summary: 'a change' }, (ctx) => ok(ctx, { done: true }));
    const broken = (() => ({
      insert: () => Promise.reject(new Error('audit table unavailable')),
    })) as unknown as Db;
    const { url, logs } = await serve(router, broken);
    const res = await fetch(`${url}/api/agent-server/${area}/things`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ data: { done: true } });
    expect(logs.text).toContain('audit event not recorded');
    expect(logs.text).toContain('audit table unavailable');
  });

  it('writes no second row for a handler that recorded its own event', async () => {
    const router = new ApiRouter(`/api/agent-server/${area}`, 'Test')
      .access({ read: 'project:read', write: 'project:operate' })
      .route(
        { method: 'post', path: '/described', summary: 'a change described by its handler' },
        async (ctx) => {
          await recordAudit(db, {
            actor: ctx.state.principal!,
            action: 'thing.described',
            path: `/${area}/described`,
          });
          ok(ctx, {});
        },
      )
      .route({ method: 'post', path: '/plain', summary: 'a change left to the trail' }, (ctx) => ok(ctx, {}));
    const { url } = await serve(router, db);
    for (const path of ['described', 'plain'])
      expect((await fetch(`${url}/api/agent-server/${area}/${path}`, { method: 'POST' })).status).toBe(200);
    expect(await rowsAt(`/${area}/described`)).toMatchObject([{ action: 'thing.described' }]);
    expect(await rowsAt(`/api/agent-server/${area}/described`)).toEqual([]);
    expect(await rowsAt(`/api/agent-server/${area}/plain`)).toMatchObject([
      { action: `${area.replace('-', '_')}.plain`, status: 200 },
    ]);
  });
});
