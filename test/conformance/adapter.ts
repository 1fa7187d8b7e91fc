/**
 * Our platform as the client of an MCP conformance scenario, driven only
 * through its public REST API. The conformance runner spawns this with the
 * scenario server's URL as the last argument, MCP_CONFORMANCE_SCENARIO and,
 * for some scenarios, MCP_CONFORMANCE_CONTEXT (JSON: pre-registered client
 * credentials). It registers the URL as an MCP server of a project, inspects
 * it (authorizing in a "browser" when asked), and runs one converse turn of
 * an agent using it, whose scripted model calls every tool offered. Exit 0
 * when all of that went as a user would expect; otherwise 1, saying why on
 * stderr (docs/mcp-conformance.md).
 *
 * Environment (set by test/integration/mcp-conformance/client-2025-11-25.test.ts):
 * AGENT_SERVER_URL (the API's real origin), PUBLIC_URL (its public origin),
 * CONFORMANCE_PROJECT_ID, CONFORMANCE_MODEL_ID (a model answered by the
 * scripted vendor), CONFORMANCE_PROMPT_ID.
 */
import { randomUUID } from 'node:crypto';
import { Browser } from './browser.js';
import { PlatformClient, UnexpectedAnswer } from './platform-client.js';
import { converseTurn, type RunView, type SuggestedCall } from './turn.js';

/** How often one scenario may send the person to authorize before the adapter calls it a loop. */
const MAX_AUTHORIZATIONS = 5;

interface Settings {
  serverUrl: string;
  scenario: string;
  context: Record<string, unknown>;
  api: PlatformClient;
  browser: Browser;
  modelId: string;
  promptId: string;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

function readSettings(): Settings {
  const serverUrl = process.argv.at(-1);
  if (!serverUrl || !/^https?:\/\//.test(serverUrl))
    throw new Error('the last argument must be the server URL');
  const apiUrl = required('AGENT_SERVER_URL');
  return {
    serverUrl,
    scenario: process.env.MCP_CONFORMANCE_SCENARIO ?? 'unknown',
    context: JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as Record<string, unknown>,
    api: new PlatformClient(apiUrl, required('CONFORMANCE_PROJECT_ID')),
    browser: new Browser(new URL(required('PUBLIC_URL')).origin, new URL(apiUrl).origin),
    modelId: required('CONFORMANCE_MODEL_ID'),
    promptId: required('CONFORMANCE_PROMPT_ID'),
  };
}

/**
 * `oauth` of the MCP server, when the scenario hands us a client registered
 * beforehand: as its operator would configure it, a machine-to-machine
 * client (the client-credentials scenarios) with `grant: client_credentials`.
 * The settings have no place for a private key, so a client that must sign
 * its assertions (`private_key_jwt`) is registered by its id alone.
 */
function preRegisteredClient(
  scenario: string,
  context: Record<string, unknown>,
): Record<string, unknown> | undefined {
  if (typeof context.client_id !== 'string') return undefined;
  const oauth: Record<string, unknown> = { client_id: context.client_id };
  if (typeof context.client_secret === 'string') {
    oauth.client_secret = context.client_secret;
    if (scenario.startsWith('auth/client-credentials')) oauth.grant = 'client_credentials';
  }
  if (typeof context.token_endpoint_auth_method === 'string')
    oauth.token_endpoint_auth_method = context.token_endpoint_auth_method;
  return oauth;
}

/** Counts the person's trips to an authorization page, so a platform asking forever ends the scenario. */
class Authorizer {
  count = 0;
  constructor(private readonly browser: Browser) {}

  async authorize(url: unknown, where: string): Promise<void> {
    if (typeof url !== 'string' || url === '')
      throw new Error(`${where}: the platform wants authorization but gave no authorization_url`);
    if (++this.count > MAX_AUTHORIZATIONS)
      throw new Error(`${where}: the platform asked for authorization more than ${MAX_AUTHORIZATIONS} times`);
    const visit = await this.browser.open(url);
    log(`authorized (${visit.hops.length} pages, ended at ${visit.status} ${visit.finalUrl})`);
  }
}

/** The calls the scenario's context asks for (`toolCalls`: name and arguments), if any. */
function suggestedCalls(context: Record<string, unknown>): SuggestedCall[] {
  const calls = context.toolCalls;
  if (!Array.isArray(calls)) return [];
  return calls.filter(
    (c): c is SuggestedCall =>
      typeof (c as SuggestedCall)?.name === 'string' && typeof (c as SuggestedCall).arguments === 'object',
  );
}

function log(message: string): void {
  process.stdout.write(`[adapter] ${message}\n`);
}

async function registerServer(s: Settings): Promise<string> {
  const oauth = preRegisteredClient(s.scenario, s.context);
  const server = await s.api.expectOk<{ id: string }>('POST', '/mcp-servers', {
    name: `conformance ${s.scenario} ${randomUUID().slice(0, 8)}`,
    endpoint: s.serverUrl,
    transport: 'streamable_http',
    ...(oauth ? { oauth } : {}),
  });
  log(`registered MCP server ${server.id}${oauth ? ' with a pre-registered OAuth client' : ''}`);
  return server.id;
}

/** Inspects the server, authorizing whenever the platform answers 409 with an authorization URL. */
async function inspect(s: Settings, serverId: string, authorizer: Authorizer): Promise<string[]> {
  for (;;) {
    const answer = await s.api.call<{ tools: Array<{ name: string }> }>(
      'POST',
      `/mcp-servers/${serverId}/inspect`,
    );
    if (answer.status === 200) {
      const names = answer.data.tools.map((t) => t.name);
      log(`inspect listed ${names.length} tools: ${names.join(', ')}`);
      return names;
    }
    if (answer.status === 409 && answer.details.authorization_url !== undefined) {
      await authorizer.authorize(answer.details.authorization_url, 'inspect');
      continue;
    }
    throw new UnexpectedAnswer(`inspect answered ${answer.status}: ${answer.text}`);
  }
}

async function createAgent(s: Settings, serverId: string): Promise<string> {
  const agent = await s.api.expectOk<{ id: string }>('POST', '/agents', {
    name: `conformance ${s.scenario} ${randomUUID().slice(0, 8)}`,
    model_id: s.modelId,
    prompt_id: s.promptId,
    mcp_servers: [{ mcp_server_id: serverId }],
  });
  return agent.id;
}

/** Why the turn's model was not offered a server's tools, from the run's `tools` record. */
function listingErrors(run: RunView): string[] {
  const servers = (run.tools as { servers?: Array<{ error?: string }> } | null | undefined)?.servers ?? [];
  return servers.map((s) => s.error).filter((e): e is string => typeof e === 'string');
}

/** Every tool inspect listed must have been called in the turn (by the platform's name or the server's own). */
function checkEveryToolCalled(listed: string[], run: RunView): void {
  const called = new Set(
    (run.tool_calls ?? []).flatMap((c) => [c.name, c.tool_name, c.mcp_tool_name].filter(Boolean) as string[]),
  );
  const missing = listed.filter((name) => ![...called].some((c) => c === name || c.endsWith(`__${name}`)));
  if (missing.length === 0) return;
  const errors = listingErrors(run);
  throw new Error(
    `the turn did not call ${missing.join(', ')} (called: ${[...called].join(', ') || 'none'})` +
      (errors.length > 0
        ? `; the turn's listing failed: ${errors.join('; ')}`
        : `; warnings: ${JSON.stringify(run.warnings ?? [])}`),
  );
}

async function main(): Promise<void> {
  const s = readSettings();
  log(`scenario ${s.scenario} against ${s.serverUrl}`);
  const authorizer = new Authorizer(s.browser);
  const serverId = await registerServer(s);
  const tools = await inspect(s, serverId, authorizer);
  const agentId = await createAgent(s, serverId);
  const run = await converseTurn(
    s.api,
    agentId,
    (url) => authorizer.authorize(url, 'turn'),
    log,
    suggestedCalls(s.context),
  );
  if (run.status !== 'completed')
    throw new Error(`the turn ended ${run.status}: ${JSON.stringify(run.error ?? run.pause ?? null)}`);
  checkEveryToolCalled(tools, run);
  log(`turn completed: ${JSON.stringify(run.output?.content ?? null)}`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`[adapter] ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
