/**
 * A call of a remote A2A agent's tool, inside the session's tool activity
 * (`runMcpTool`, which hands it here): the arguments checked, the call
 * announced, the remote task sent once and followed (activities/tools/a2a-task-call.ts)
 * while the activity heartbeats, and its answer stored as the call's result.
 * A failure to reach the remote is retried by the activity (the message is
 * never sent twice); the last attempt, and anything the remote refused,
 * goes back to the model.
 */
import { Context } from '@temporalio/activity';
import { A2AError } from '@a2a-js/sdk/errors';
import type { A2aConnection } from '../../core/a2a/client.js';
import {
  a2aBearer,
  A2aAuthorizationRequired,
  A2aOAuthUnavailable,
  markTokenRefused,
  usesOAuth,
} from '../../core/a2a/oauth.js';
import type { DbA2aAgent } from '../../core/db/tables/index.js';
import { publicBaseUrl } from '../../core/mcp/oauth/index.js';
import type { ToolCall } from '../../core/llm/types.js';
import { A2aAgentsRepository } from '../../core/repositories/a2a-agents.repository.js';
import { RunEventsRepository } from '../../core/repositories/run-events.repository.js';
import { metrics } from '../../core/telemetry/metrics.js';
import { errorName } from '../../core/telemetry/metrics/genai.js';
import type { McpToolOutcome } from '../../workflows/session.definitions.js';
import { runA2aTask } from '../tools/a2a-task-call.js';
import { errorText, TOOL_ATTEMPTS, type StoreResult } from './tool-results.js';
import type { RunTools } from './tools.js';
import { DEFAULT_PERSON_WAIT_MS } from './list-tools.js';
import { heartbeating } from './turn-run.js';
import type { SessionDeps, TurnPlan } from './types.js';

type Offered = RunTools['offered'][number];

export interface A2aCallAt {
  runId: string;
  step: number;
  call: ToolCall;
  args: Record<string, unknown>;
  plan: TurnPlan;
  offered: Offered;
  store: StoreResult;
  /** The run's end user: whose tokens, for an agent that keeps them per user. */
  endUserId: string | null;
}

/** The arguments' own problems, said to the model. */
function argumentProblem(args: Record<string, unknown>): string | undefined {
  if (typeof args.message !== 'string' || args.message.trim() === '')
    return '"message" must be a non-empty text';
  if (args.task_id !== undefined && (typeof args.task_id !== 'string' || args.task_id === ''))
    return '"task_id" must be the non-empty task id the remote agent gave';
  return undefined;
}

export async function runA2aCall(deps: SessionDeps, at: A2aCallAt): Promise<McpToolOutcome> {
  const { runId, step, call, args, offered, store } = at;
  const problem = argumentProblem(args);
  if (problem) {
    await store(problem, true);
    return { is_error: true };
  }
  const ctx = Context.current();
  const events = new RunEventsRepository(deps.db);
  const data = { step, id: call.id, name: call.name, server: offered.server_name, attempt: ctx.info.attempt };
  await events.append(runId, 'tool_call.started', data, `${step}.tool.${call.id}.started`);
  const row = await new A2aAgentsRepository(deps.db).findById(offered.server_id!);
  if (!row) {
    await store(`tool "${call.name}" failed: its A2A agent no longer exists`, true);
    return { is_error: true };
  }
  const auth = oauthHooks(deps, row, at.endUserId);
  let state = 'SENDING';
  const stop = heartbeating(() => ({ a2a_state: state }));
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  try {
    const result = await runA2aTask(deps.db, {
      conn: {
        cardUrl: row.card_url,
        headers: row.headers_enc ? deps.secrets.decryptJson<Record<string, string>>(row.headers_enc) : {},
        ...auth.hooks,
      },
      a2aAgentId: row.id,
      toolName: call.name,
      skillId: offered.tool ?? 'delegate',
      runId,
      callKey: `${step}:${call.id}`,
      text: args.message as string,
      ...(typeof args.task_id === 'string' ? { continueTaskId: args.task_id } : {}),
      retried: ctx.info.attempt > 1,
      timeoutMs: deps.config.session.mcpToolTimeoutMs,
      pollMs: 500,
      signal: ctx.cancellationSignal,
      onState: (s) => {
        state = s;
      },
    });
    const { output, isError, ...extras } = result;
    metrics().session.toolCall('a2a', seconds(), isError ? 'tool_error' : undefined);
    await store(output, isError, { server: offered.server_name, tool: offered.tool, a2a: extras });
    return { is_error: isError };
  } catch (err) {
    metrics().session.toolCall('a2a', seconds(), errorName(err));
    if (ctx.cancellationSignal.aborted) throw err;
    if (err instanceof A2aAuthorizationRequired)
      return {
        kind: 'awaiting_authorization',
        details: {
          call_id: call.id,
          server_id: row.id,
          server_name: row.name,
          server_kind: 'a2a',
          end_user_id: err.endUserId,
          authorization_url: err.authorizationUrl,
        },
        timeoutMs: at.plan.authorization_timeout_ms ?? DEFAULT_PERSON_WAIT_MS,
      };
    // A spent token was refused (now marked so): the next attempt gets another one, or asks a person.
    const retryable = auth.refusedNow() || !(err instanceof A2AError || err instanceof A2aOAuthUnavailable);
    // The remote answered with an error (a refusal): retrying cannot help. Anything else may be an outage.
    if (retryable && ctx.info.attempt < TOOL_ATTEMPTS) throw err;
    await store(`tool "${call.name}" failed: ${errorText(err)}`, true, { server: offered.server_name });
    return { is_error: true };
  } finally {
    stop();
  }
}

/**
 * The connection's OAuth hooks, for an agent that uses OAuth (core/a2a/oauth.ts):
 * a bearer token learnt from the card, and a refused token marked spent.
 */
function oauthHooks(deps: SessionDeps, row: DbA2aAgent, endUserId: string | null) {
  const access = { db: deps.db, secrets: deps.secrets, publicUrl: publicBaseUrl(deps.config) };
  let bearer = false;
  let refused = false;
  const hooks: Pick<A2aConnection, 'authorize' | 'refused'> = {
    authorize: async (card): Promise<Record<string, string>> => {
      if (!usesOAuth(row, card)) return {};
      const token = await a2aBearer(access, row, card, endUserId);
      bearer = true;
      return { authorization: `Bearer ${token}` };
    },
    // A refusal of the agent's own headers is the model's to hear about, not ours to mend.
    refused: async () => {
      if (!bearer) return;
      refused = true;
      await markTokenRefused(access, row, endUserId);
    },
  };
  return { hooks, refusedNow: () => refused };
}
