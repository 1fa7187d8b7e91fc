/**
 * Webhooks against the real stack: a project's endpoints and a converse
 * request's one-off URL receive the run's events signed the Standard Webhooks
 * way (checked with the `standardwebhooks` package), an endpoint that is down
 * for a while gets the delivery once it is back, deliveries list their
 * attempts and can be sent again, and an address the egress policy refuses
 * is never dialled: its attempts fail saying so.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEverythingServer, type RunningMcp } from '../../fixtures/mcp-servers.js';
import { uniqueName } from '../../helpers/factories.js';
import { noTemporal } from '../../helpers/services.js';
import { useSessionWorld, waitFor } from './session-harness.js';

const WEBHOOKS = '/api/agent-server/webhooks';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A local endpoint: records every request and answers from a queue of statuses (then 200). */
class Receiver {
  readonly received: Received[] = [];
  statuses: number[] = [];
  private server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString() });
      res.writeHead(this.statuses.shift() ?? 200).end();
    });
  });

  async start(): Promise<void> {
    this.server.listen(0, '127.0.0.1');
    await new Promise((r) => this.server.once('listening', r));
  }
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }
  /** What arrived about one run, parsed. */
  forRun(runId: string): Array<Received & { payload: { type: string; data: { run_id: string } } }> {
    return this.received
      .map((r) => ({ ...r, payload: JSON.parse(r.body) as { type: string; data: { run_id: string } } }))
      .filter((r) => r.payload.data.run_id === runId);
  }
  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}

interface WebhookData {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  secret?: string;
}
interface DeliveryData {
  id: string;
  url: string;
  run_id: string;
  event_type: string;
  status: string;
  attempts: Array<{ at: string; status_code: number | null; error: string | null; duration_ms: number }>;
}

/** Standard Webhooks verification as a receiver would do it: throws unless signed with `secret`. */
function verify(secret: string, r: Received): unknown {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  });
}

describe.skipIf(noTemporal())('webhooks', () => {
  const world = useSessionWorld({
    WEBHOOK_RETRY_INITIAL_MS: '200',
    WEBHOOK_RETRY_MAX_MS: '400',
    WEBHOOK_EXPIRE_MS: '2500',
    WEBHOOK_TIMEOUT_MS: '2000',
  });
  const receiver = new Receiver();
  const created: string[] = [];

  beforeAll(() => receiver.start());
  afterAll(() => receiver.close());
  // Each test's webhooks end with it, so later turns do not deliver to them.
  afterEach(async () => {
    for (const id of created.splice(0)) await world.fx.api.request('DELETE', `${WEBHOOKS}/${id}`);
    receiver.statuses = [];
  });

  async function register(body: Record<string, unknown>): Promise<WebhookData> {
    const res = await world.fx.api.request<WebhookData>(
      'POST',
      `${WEBHOOKS}?project_id=${world.fx.projectId}`,
      body,
    );
    expect(res.status, res.text).toBe(200);
    created.push(res.body.data.id);
    return res.body.data;
  }

  async function deliveries(webhookId: string): Promise<DeliveryData[]> {
    const res = await world.fx.api.request<DeliveryData[]>('GET', `${WEBHOOKS}/${webhookId}/deliveries`);
    expect(res.status, res.text).toBe(200);
    return res.body.data;
  }

  async function completedTurn(extra: Record<string, unknown> = {}) {
    const agent = await world.fx.agent();
    const res = await world.fx.converse({
      agent_id: agent.id,
      message: 'Hi',
      context: { role: 'a helper' },
      ...extra,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.status).toBe('completed');
    return res.body.data as typeof res.body.data & { webhook_secret?: string };
  }

  it('shows the secret once, lists and updates webhooks without it, and 400s naming the field', async () => {
    const hook = await register({ url: receiver.url, events: ['run.completed'] });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(hook.secret!.slice(6), 'base64')).toHaveLength(32);
    expect(hook).toMatchObject({ url: receiver.url, events: ['run.completed'], enabled: true });

    const got = await world.fx.api.request<WebhookData>('GET', `${WEBHOOKS}/${hook.id}`);
    expect(got.body.data).not.toHaveProperty('secret');
    const list = await world.fx.api.request<WebhookData[]>(
      'GET',
      `${WEBHOOKS}?project_id=${world.fx.projectId}`,
    );
    expect(list.body.data.map((w) => w.id)).toContain(hook.id);
    expect(list.text).not.toContain(hook.secret!);

    const patched = await world.fx.api.request<WebhookData>('PATCH', `${WEBHOOKS}/${hook.id}`, {
      events: ['run.failed', 'run.paused'],
      enabled: false,
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ events: ['run.failed', 'run.paused'], enabled: false });

    const bad = await world.fx.api.request('POST', `${WEBHOOKS}?project_id=${world.fx.projectId}`, {
      url: 'ftp://example.com/x',
      events: ['run.exploded'],
    });
    expect(bad.status).toBe(400);
    const fields = (bad.body.errorDetails as { fields: Array<{ field: string }> }).fields.map((f) => f.field);
    expect(fields).toEqual(expect.arrayContaining(['url', 'events.0']));
    const noProject = await world.fx.api.request('POST', WEBHOOKS, {
      url: receiver.url,
      events: ['run.failed'],
    });
    expect(noProject.status).toBe(400);
    const emptyPatch = await world.fx.api.request('PATCH', `${WEBHOOKS}/${hook.id}`, { events: [] });
    expect(emptyPatch.status).toBe(400);
    expect(emptyPatch.text).toContain('events');
    const otherProject = await world.fx.api.request(
      'GET',
      `${WEBHOOKS}/${hook.id}?project_id=00000000-0000-4000-8000-000000000000`,
    );
    expect(otherProject.status).toBe(404);
  });

  it("delivers run.completed signed to the project's webhook and to the converse request's one-off URL", async () => {
    const hook = await register({ url: receiver.url, events: ['run.completed', 'run.failed'] });
    const oneOff = new Receiver();
    await oneOff.start();
    try {
      const run = await completedTurn({ webhook: oneOff.url });
      expect(run.webhook_secret).toMatch(/^whsec_/);
      expect(run.webhook_secret).not.toBe(hook.secret);

      const [mine] = await waitFor(() => {
        const r = receiver.forRun(run.run_id);
        return r.length ? r : undefined;
      });
      expect(verify(hook.secret!, mine!)).toMatchObject({
        type: 'run.completed',
        data: { run_id: run.run_id },
      });
      expect(mine!.payload).toMatchObject({
        type: 'run.completed',
        data: { run_id: run.run_id, status: 'completed', output: { content: run.output!.content } },
      });
      expect(() => verify(run.webhook_secret!, mine!)).toThrow();

      const [theirs] = await waitFor(() => {
        const r = oneOff.forRun(run.run_id);
        return r.length ? r : undefined;
      });
      expect(verify(run.webhook_secret!, theirs!)).toMatchObject({ type: 'run.completed' });

      const [d] = await waitFor(async () => {
        const list = (await deliveries(hook.id)).filter((x) => x.run_id === run.run_id);
        return list[0]?.status === 'delivered' ? list : undefined;
      });
      expect(d).toMatchObject({ event_type: 'run.completed', attempts: [{ status_code: 200, error: null }] });
      expect(mine!.headers['webhook-id']).toBe(d!.id);
      // The run view never shows the one-off secret.
      const view = await world.fx.api.request('GET', `/api/agent-server/runs/${run.run_id}`);
      expect(view.text).not.toContain(run.webhook_secret!);

      // The run lists both deliveries; the one-off one is sent again from there, same id and body.
      const ofRun = await waitFor(async () => {
        const res = await world.fx.api.request<DeliveryData[]>(
          'GET',
          `/api/agent-server/runs/${run.run_id}/deliveries`,
        );
        return res.body.data.every((x) => x.status === 'delivered') && res.body.data.length === 2
          ? res.body.data
          : undefined;
      });
      const single = ofRun.find(
        (x) => (x as DeliveryData & { webhook_id: string | null }).webhook_id === null,
      );
      expect(single).toMatchObject({ url: oneOff.url, event_type: 'run.completed' });
      const again = await world.fx.api.request<DeliveryData>(
        'POST',
        `/api/agent-server/runs/${run.run_id}/deliveries/${single!.id}/redeliver`,
      );
      expect(again.status, again.text).toBe(200);
      const twice = await waitFor(() => {
        const r = oneOff.forRun(run.run_id);
        return r.length === 2 ? r : undefined;
      });
      expect(twice[1]!.headers['webhook-id']).toBe(single!.id);
      expect(twice[1]!.body).toBe(theirs!.body);
      const unknown = await world.fx.api.request(
        'GET',
        `/api/agent-server/runs/00000000-0000-4000-8000-000000000000/deliveries`,
      );
      expect(unknown.status).toBe(404);
    } finally {
      await oneOff.close();
    }
  });

  it('retries an endpoint that is down until it answers, lists the attempts, and redelivers', async () => {
    const hook = await register({ url: receiver.url, events: ['run.completed'] });
    receiver.statuses = [503, 503];
    const run = await completedTurn();

    const [d] = await waitFor(async () => {
      const list = (await deliveries(hook.id)).filter((x) => x.run_id === run.run_id);
      return list[0]?.status === 'delivered' ? list : undefined;
    });
    expect(d!.attempts.map((a) => a.status_code)).toEqual([503, 503, 200]);
    expect(d!.attempts.map((a) => a.error)).toEqual(['HTTP 503', 'HTTP 503', null]);
    expect(receiver.forRun(run.run_id)).toHaveLength(3);

    const again = await world.fx.api.request<DeliveryData>(
      'POST',
      `${WEBHOOKS}/${hook.id}/deliveries/${d!.id}/redeliver`,
    );
    expect(again.status, again.text).toBe(200);
    await waitFor(() => (receiver.forRun(run.run_id).length === 4 ? true : undefined));
    const resent = receiver.forRun(run.run_id).at(-1)!;
    expect(resent.headers['webhook-id']).toBe(d!.id);
    expect(verify(hook.secret!, resent)).toMatchObject({ type: 'run.completed' });
    const after = await waitFor(async () => {
      const x = (await deliveries(hook.id)).find((y) => y.id === d!.id);
      return x?.status === 'delivered' && x.attempts.length === 4 ? x : undefined;
    });
    expect(after.attempts).toHaveLength(4);

    const unknown = await world.fx.api.request(
      'POST',
      `${WEBHOOKS}/${hook.id}/deliveries/00000000-0000-4000-8000-000000000000/redeliver`,
    );
    expect(unknown.status).toBe(404);
  });

  it('sends the retries of a delivery to the URL its webhook was corrected to', async () => {
    const hook = await register({ url: 'http://127.0.0.1:9/nobody-listens', events: ['run.completed'] });
    const run = await completedTurn();
    await waitFor(async () => {
      const d = (await deliveries(hook.id)).find((x) => x.run_id === run.run_id);
      return d && d.attempts.length > 0 ? d : undefined;
    });
    const fixed = await world.fx.api.request('PATCH', `${WEBHOOKS}/${hook.id}`, { url: receiver.url });
    expect(fixed.status).toBe(200);
    const d = await waitFor(async () => {
      const x = (await deliveries(hook.id)).find((y) => y.run_id === run.run_id);
      return x?.status === 'delivered' ? x : undefined;
    });
    expect(d.attempts[0]).toMatchObject({
      status_code: null,
      error: expect.stringMatching(/^connection_failed/) as unknown,
    });
    expect(d.attempts.at(-1)).toMatchObject({ status_code: 200, error: null });
    expect(d.url).toBe(receiver.url);
    expect(verify(hook.secret!, receiver.forRun(run.run_id)[0]!)).toMatchObject({ type: 'run.completed' });
  });

  it('announces a pause for approval, its cancellation and a failed turn, each once', async () => {
    const everything: RunningMcp = await startEverythingServer('streamableHttp');
    try {
      const hook = await register({
        url: receiver.url,
        events: ['run.paused', 'run.cancelled', 'run.failed'],
      });
      const mcp = await world.fx.api.request<{ id: string }>(
        'POST',
        `/api/agent-server/mcp-servers?project_id=${world.fx.projectId}`,
        { name: uniqueName('mcp'), endpoint: everything.url },
      );
      expect(mcp.status, mcp.text).toBe(200);
      const agent = await world.fx.agent({
        mcp_servers: [
          { mcp_server_id: mcp.body.data.id, tool_filters: ['echo'], tools_requiring_approval: ['echo'] },
        ],
      });
      world.fx.vendor.script({ reply: { tool_calls: [{ name: 'echo', arguments: { message: 'x' } }] } });
      const paused = await world.fx.converse({
        agent_id: agent.id,
        message: 'echo x',
        context: { role: 'a helper' },
      });
      expect(paused.body.data.status).toBe('awaiting_approval');
      const runId = paused.body.data.run_id;
      const cancelled = await world.fx.api.request('POST', `/api/agent-server/runs/${runId}/cancel`, {
        action: 'interrupt',
      });
      expect(cancelled.status, cancelled.text).toBe(200);

      const got = await waitFor(() => {
        const r = receiver.forRun(runId);
        return r.length >= 2 ? r : undefined;
      });
      expect(got.map((r) => r.payload.type)).toEqual(['run.paused', 'run.cancelled']);
      expect(verify(hook.secret!, got[0]!)).toMatchObject({
        data: { status: 'awaiting_approval', pause: { reason: 'approval' } },
      });
      expect(verify(hook.secret!, got[1]!)).toMatchObject({ data: { status: 'cancelled' } });

      world.fx.vendor.script({ error: { status: 400, message: 'no such thing' } });
      const failed = await world.fx.converse({
        agent_id: agent.id,
        message: 'fail',
        context: { role: 'a helper' },
      });
      expect(failed.body.data.status).toBe('failed');
      const [f] = await waitFor(() => {
        const r = receiver.forRun(failed.body.data.run_id);
        return r.length ? r : undefined;
      });
      expect(verify(hook.secret!, f!)).toMatchObject({ type: 'run.failed', data: { status: 'failed' } });
      // Nothing was announced twice.
      await new Promise((r) => setTimeout(r, 500));
      expect(receiver.forRun(runId)).toHaveLength(2);
      expect(receiver.forRun(failed.body.data.run_id)).toHaveLength(1);
    } finally {
      await everything.stop();
    }
  });

  it('never dials an address the egress policy refuses: each attempt fails saying so, then the delivery fails', async () => {
    const hook = await register({ url: 'http://169.254.169.254/latest/hook', events: ['run.completed'] });
    const run = await completedTurn();
    const [d] = await waitFor(
      async () => {
        const list = (await deliveries(hook.id)).filter((x) => x.run_id === run.run_id);
        return list[0]?.status === 'failed' ? list : undefined;
      },
      20_000,
      'the refused delivery to fail',
    );
    expect(d!.attempts.length).toBeGreaterThan(1);
    for (const a of d!.attempts) {
      expect(a.status_code).toBeNull();
      expect(a.error).toMatch(/^egress_denied: /);
    }
  });
});
