/**
 * Runs that wait for a person on an MCP server's behalf, in a real browser
 * against the real stack (Temporal, PostgreSQL, an SDK-built MCP server whose
 * tool asks the user a question mid-call, the scripted model): Waiting runs
 * shows the server's question as a form from its schema (default prefilled,
 * the API's message for a missing required field under its input), Submit
 * answers it and the run completes with the tool's answer holding what was
 * typed; the playground answers the same question inside the turn; Decline
 * tells the server no; a page to open (URL mode) is linked, Done answers it.
 * The agent form saves the input and authorization timeouts. A run whose MCP server wants OAuth waits in the inbox
 * with Authorize, which opens the authorization page in a new tab; once the
 * flow comes back to the API's callback the run goes on by itself, and the
 * server reads as authorized until Forget authorization. The MCP
 * servers page shows a server with OAuth settings as unauthorized with
 * Authorize, and its form keeps the client secret redacted while other OAuth
 * fields change.
 */

const TOKEN = 'console-test-access-token';

async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString();
  return text && req.headers['content-type']?.includes('json') ? JSON.parse(text) : undefined;
}

/**
 * An MCP server that admits only its own bearer token, with the smallest
 * authorization server beside it (same origin): RFC 9728 and RFC 8414
 * metadata, an authorize endpoint that signs the person in at once and sends
 * them back with a code (and `iss`), a token endpoint that trades any code
 * for the token. The client is configured on the MCP server (no registration).
 */
async function startProtectedMcp() {
  let base = '';
  const json = (res: ServerResponse, status: number, data: unknown, headers: Record<string, string> = {}) =>
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(data));
  const mcp = async (req: IncomingMessage, res: ServerResponse) => {
    const message = await body(req);
    if (req.headers.authorization !== `Bearer ${TOKEN}`)
      return json(
        res,
        401,
        { error: 'invalid_token' },
        {
          'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"`,
        },
      );
    const server = new McpServer({ name: 'protected-test', version: '1.0.0' });
    server.registerTool('whoami', { description: 'Says who the token belongs to' }, () => ({
      content: [{ type: 'text' as const, text: 'hello alice' }],
    }));
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, message);
  };
  const http = createServer((req, res) => {
    const url = new URL(req.url ?? '/', base);
    if (url.pathname.startsWith('/.well-known/oauth-protected-resource'))
      return json(res, 200, {
        resource: `${base}/mcp`,
        authorization_servers: [base],
        scopes_supported: ['mcp:tools'],
      });
    if (url.pathname === '/.well-known/oauth-authorization-server')
      return json(res, 200, {
        issuer: base,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/token`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
        authorization_response_iss_parameter_supported: true,
      });
    if (url.pathname === '/authorize') {
      const back = new URL(url.searchParams.get('redirect_uri') ?? '');
      back.searchParams.set('code', 'the-code');
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      back.searchParams.set('iss', base);
      return res.writeHead(302, { location: back.href }).end();
    }
    if (url.pathname === '/token' && req.method === 'POST')
      return void body(req).then(() =>
        json(res, 200, { access_token: TOKEN, token_type: 'Bearer', expires_in: 3600, scope: 'mcp:tools' }),
      );
    if (url.pathname === '/mcp' && req.method === 'POST') return void mcp(req, res);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    endpoint: `${base}/mcp`,
    issuer: base,
    stop: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAskingMcpServer } from '../../fixtures/mcp-servers.js';
import { noBrowser, startConsoleStack, type ConsoleStack } from '../../helpers/browser.js';
import { uniqueName } from '../../helpers/factories.js';
import { freePort } from '../../helpers/ports.js';
import { noTemporal } from '../../helpers/services.js';
import { consoleWorld, poll, type ConsoleWorld, type RunView } from './console-world.js';
import { describedBy, label } from './form-helpers.js';

type AskingServer = Awaited<ReturnType<typeof startAskingMcpServer>>;

interface Run extends RunView {
  pause: { reason: string; details: Record<string, unknown> } | null;
  tool_calls: Array<{ name: string; output?: string; is_error?: boolean }>;
}

describe.skipIf(noTemporal() || noBrowser())("console: runs waiting for an MCP server's question", () => {
  let stack: ConsoleStack;
  let world: ConsoleWorld;
  let mcp: AskingServer;
  let protectedMcp: Awaited<ReturnType<typeof startProtectedMcp>>;

  beforeAll(async () => {
    // The authorization server sends the person back to the API's callback, under its public URL.
    const port = await freePort();
    [stack, mcp, protectedMcp] = await Promise.all([
      startConsoleStack({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` }),
      startAskingMcpServer(),
      startProtectedMcp(),
    ]);
    world = await consoleWorld(stack);
  });
  afterAll(async () => {
    await mcp?.stop();
    await protectedMcp?.stop();
    await stack?.close();
  });

  const run = async (runId: string) =>
    (await stack.api.request<Run>('GET', `/api/agent-server/runs/${runId}`)).body.data;
  const until = (runId: string, status: string) =>
    poll(async () => ((await run(runId)).status === status ? run(runId) : undefined), `run ${status}`);
  /** The 400 a form without its required field provokes on purpose, as the browser and the world log it. */
  const problems = () =>
    world.problems().filter((p) => !/^400 /.test(p) && !/status of 400 \(Bad Request\)/.test(p));

  /** An agent offered the asking server's tools whose model calls `tool` once, then says `reply`. */
  async function askingAgent(tool: string, reply: string) {
    const name = uniqueName('asking');
    const server = await stack.api.request<{ id: string }>(
      'POST',
      `/api/agent-server/mcp-servers?project_id=${world.projectId}`,
      { name, endpoint: mcp.url },
    );
    expect(server.status).toBe(200);
    stack.vendor.script(
      { reply: { tool_calls: [{ name: tool, arguments: {} }] } },
      { reply: { text: reply } },
    );
    return world.agent({ mcp_servers: [{ mcp_server_id: server.body.data.id }] });
  }

  it("answers the server's form in Waiting runs: the default prefilled, a missing required field named, the run completes with the answer", async () => {
    const agent = await askingAgent('book_seat', 'Your seat is booked');
    const waiting = (await world.converse({ agent_id: agent.id, message: 'Book me a seat' })) as Run;
    expect(waiting.status).toBe('awaiting_input');

    const page = await world.open('/waiting');
    const card = page.getByRole('article', { name: `Input for run ${waiting.run_id}` });
    await card.waitFor();
    expect(await card.getByTestId('input-message').textContent()).toBe('Which seat would you like?');
    expect(await card.textContent()).toContain(agent.name);
    // Counted in the side bar with the other waiting runs.
    const nav = page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: /Waiting runs/ });
    await nav.getByLabel('1 waiting').waitFor();

    const seat = label(card, 'seat');
    expect(await describedBy(seat)).toContain('Seat number, e.g. 12A');
    expect(await label(card, 'meal').inputValue()).toBe('vegetarian');

    // Without the required seat the API refuses, naming content.seat: its message sits under the input.
    await card.getByRole('button', { name: 'Submit' }).click();
    await expect.poll(() => seat.getAttribute('aria-invalid')).toBe('true');
    expect(await describedBy(seat)).toContain('seat');
    expect((await run(waiting.run_id)).status).toBe('awaiting_input');
    await stack.screenshot(page, 'waiting-input');

    await seat.fill('14C');
    await card.getByRole('button', { name: 'Submit' }).click();
    await card.waitFor({ state: 'detached' });
    const done = await until(waiting.run_id, 'completed');
    expect(done.output?.content).toBe('Your seat is booked');
    const answer = done.tool_calls.find((c) => c.name === 'book_seat');
    expect(answer?.is_error).toBe(false);
    expect(answer?.output).toContain('"seat":"14C"');
    expect(mcp.heard).toContainEqual({
      tool: 'book_seat',
      action: 'accept',
      content: { seat: '14C', meal: 'vegetarian' },
    });
    await page.getByText('No run is waiting').waitFor();
    expect(problems()).toEqual([]);
  });

  it('answers the question inside the playground turn, which shows the tool result with the answer', async () => {
    const agent = await askingAgent('book_seat', 'Booked from the playground');
    const page = await world.open(`/playground?agent=${agent.id}`);
    await page.getByRole('textbox', { name: 'Message' }).fill('A window seat please');
    await page.getByRole('button', { name: 'Send' }).click();
    const turn = page.getByRole('article', { name: 'Turn 1' });
    await turn.getByText('awaiting input').waitFor();
    const notice = turn.getByRole('status').filter({ hasText: 'Waiting for your answer' });
    await notice.waitFor();
    expect(await notice.textContent()).toContain('Which seat would you like?');
    await label(notice, 'seat').fill('2A');
    await notice.getByRole('button', { name: 'Submit' }).click();

    await turn.getByText('Booked from the playground').waitFor();
    await notice.waitFor({ state: 'detached' });
    const result = turn.getByRole('region', { name: 'Tool call book_seat' });
    expect(await result.textContent()).toContain('2A');
    expect(problems()).toEqual([]);
  });

  it('Decline tells the server the person would not answer; the run goes on', async () => {
    const agent = await askingAgent('book_seat', 'No seat then');
    const waiting = (await world.converse({ agent_id: agent.id, message: 'Maybe a seat' })) as Run;
    expect(waiting.status).toBe('awaiting_input');
    const page = await world.open('/waiting');
    const card = page.getByRole('article', { name: `Input for run ${waiting.run_id}` });
    await card.getByRole('button', { name: 'Decline' }).click();
    await card.waitFor({ state: 'detached' });
    const done = await until(waiting.run_id, 'completed');
    expect(done.tool_calls.find((c) => c.name === 'book_seat')?.output).toContain('"action":"decline"');
    expect(problems()).toEqual([]);
  });

  it('a page to open (URL mode): the card links to it, and Done tells the server the person went there', async () => {
    const agent = await askingAgent('link_account', 'Account linked');
    const waiting = (await world.converse({ agent_id: agent.id, message: 'Link my account' })) as Run;
    expect(waiting.status).toBe('awaiting_input');
    const page = await world.open('/waiting');
    const card = page.getByRole('article', { name: `Input for run ${waiting.run_id}` });
    expect(await card.getByTestId('input-message').textContent()).toBe('Link your account on this page');
    const link = card.getByRole('link', { name: 'Open accounts.example.test' });
    expect(await link.getAttribute('href')).toBe('https://accounts.example.test/link?state=abc');
    expect(await link.getAttribute('target')).toBe('_blank');
    expect(await card.getByRole('button', { name: 'Submit' }).count()).toBe(0);
    await card.getByRole('button', { name: 'Done' }).click();
    await card.waitFor({ state: 'detached' });
    const done = await until(waiting.run_id, 'completed');
    expect(done.output?.content).toBe('Account linked');
    expect(done.tool_calls.find((c) => c.name === 'link_account')?.output).toContain('"action":"accept"');
    expect(problems()).toEqual([]);
  });

  it('the agent form saves how long a call waits for an answer and for authorization (empty: 24 hours)', async () => {
    const agent = await world.agent();
    const page = await world.open(`/config/agents?edit=${agent.id}`);
    const form = page.getByRole('dialog', { name: `Edit agent ${agent.name}` });
    await label(form, 'Input timeout (ms)').fill('600000');
    await label(form, 'Authorization timeout (ms)').fill('900000');
    await form.getByRole('button', { name: 'Save agent' }).click();
    await form.waitFor({ state: 'hidden' });
    const saved = await stack.api.request<Record<string, unknown>>(
      'GET',
      `/api/agent-server/agents/${agent.id}`,
    );
    expect(saved.body.data).toMatchObject({ input_timeout_ms: 600000, authorization_timeout_ms: 900000 });

    await page.getByRole('button', { name: `Edit ${agent.name}` }).click();
    const again = page.getByRole('dialog', { name: `Edit agent ${agent.name}` });
    expect(await label(again, 'Input timeout (ms)').inputValue()).toBe('600000');
    await label(again, 'Input timeout (ms)').fill('');
    await again.getByRole('button', { name: 'Save agent' }).click();
    await again.waitFor({ state: 'hidden' });
    const cleared = await stack.api.request<Record<string, unknown>>(
      'GET',
      `/api/agent-server/agents/${agent.id}`,
    );
    expect(cleared.body.data).toMatchObject({ input_timeout_ms: null, authorization_timeout_ms: 900000 });
    expect(problems()).toEqual([]);
  });

  it("lists a run waiting for its MCP server's authorization; Authorize opens the page in a new tab, and the run goes on once it completes", async () => {
    const name = uniqueName('protected');
    const server = await stack.api.request<{ id: string }>(
      'POST',
      `/api/agent-server/mcp-servers?project_id=${world.projectId}`,
      { name, endpoint: protectedMcp.endpoint, oauth: { client_id: 'console-test' } },
    );
    expect(server.status).toBe(200);
    stack.vendor.script(
      { reply: { tool_calls: [{ name: 'whoami', arguments: {} }] } },
      { reply: { text: 'You are alice' } },
    );
    const agent = await world.agent({ mcp_servers: [{ mcp_server_id: server.body.data.id }] });
    const waiting = (await world.converse({ agent_id: agent.id, message: 'Who am I?' })) as Run;
    expect(waiting.status).toBe('awaiting_authorization');

    const page = await world.open('/waiting');
    const card = page.getByRole('article', { name: `Authorization for run ${waiting.run_id}` });
    await card.getByText(`MCP server ${name} needs authorization`).waitFor();
    const authorize = card.getByRole('link', { name: 'Authorize' });
    expect(await authorize.getAttribute('target')).toBe('_blank');
    expect(await authorize.getAttribute('rel')).toContain('noopener');
    expect((await authorize.getAttribute('href'))?.startsWith(`${protectedMcp.issuer}/authorize?`)).toBe(
      true,
    );
    await stack.screenshot(page, 'waiting-authorization');

    // The person's tab: the authorization server sends it back to the API's callback, which says so.
    const [tab] = await Promise.all([page.context().waitForEvent('page'), authorize.click()]);
    await tab.getByText('Authorized').first().waitFor();
    await tab.close();

    await card.waitFor({ state: 'detached' });
    const done = await until(waiting.run_id, 'completed');
    expect(done.output?.content).toBe('You are alice');
    expect(done.tool_calls.find((c) => c.name === 'whoami')?.output).toContain('hello alice');

    // The MCP servers page says the project holds a token now; Forget authorization deletes it.
    const servers = await world.open('/config/mcp-servers');
    const row = servers.getByRole('row', { name: new RegExp(name) });
    await row.getByText('authorized', { exact: true }).waitFor();
    await row.getByRole('button', { name: `Forget authorization of ${name}` }).click();
    const confirm = servers.getByRole('dialog', { name: `Forget authorization of ${name}?` });
    await confirm.getByRole('button', { name: 'Forget authorization' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await row.getByText('unauthorized', { exact: true }).waitFor();
    expect(problems()).toEqual([]);
  });

  it('shows a server with OAuth settings as unauthorized with Authorize; its form keeps the secret redacted', async () => {
    const name = uniqueName('oauth');
    const created = await stack.api.request<{ id: string }>(
      'POST',
      `/api/agent-server/mcp-servers?project_id=${world.projectId}`,
      {
        name,
        endpoint: mcp.url,
        oauth: { client_id: 'console-client', client_secret: 'console-secret', scopes: ['read'] },
      },
    );
    expect(created.status).toBe(200);
    const page = await world.open('/config/mcp-servers');
    const row = page.getByRole('row', { name: new RegExp(name) });
    await row.getByText('unauthorized').waitFor();
    await row.getByRole('button', { name: `Authorize ${name}` }).waitFor();
    expect(await row.getByRole('button', { name: `Forget authorization of ${name}` }).count()).toBe(0);

    await page.getByRole('button', { name: `Edit ${name}` }).click();
    const form = page.getByRole('dialog', { name: `Edit MCP server ${name}` });
    expect(await label(form, 'Client id').inputValue()).toBe('console-client');
    expect(await label(form, 'Client secret').inputValue()).toBe('[redacted]');
    expect(await label(form, 'Scopes').inputValue()).toBe('read');
    await label(form, 'Scopes').fill('read, write');
    await label(form, 'Per-user tokens').check();
    await form.getByRole('button', { name: 'Save MCP server' }).click();
    await form.waitFor({ state: 'hidden' });

    const saved = await stack.api.request<Record<string, unknown>>(
      'GET',
      `/api/agent-server/mcp-servers/${created.body.data.id}`,
    );
    expect(saved.body.data).toMatchObject({
      oauth: { client_id: 'console-client', client_secret: '[redacted]', scopes: ['read', 'write'] },
      per_user_tokens: true,
      authorization: { status: 'unauthorized' },
    });
    expect(problems()).toEqual([]);
  });
});
