import { createHash } from 'node:crypto';
import {
  CLIENT_CAPABILITIES_META_KEY,
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  type InputRequiredResult,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { RunView } from '../../../core/runs/run-view.js';
import { callText } from './results.js';

/** The key of the approval question among a round's `inputRequests` (and of its answer). */
export const APPROVAL_KEY = 'approval';

/** What a round of questions carries back: the paused run, for the tool (agent) it belongs to. */
export interface ApprovalState {
  runId: string;
  agentId: string;
}

/** The person's answer: approve or reject every pending call, or nothing decided (dismissed, or not asked). */
export type ApprovalAnswer = 'approve' | 'reject' | 'undecided';

/** The form the caller's client shows: one yes/no. */
const APPROVAL_FORM = {
  type: 'object' as const,
  properties: {
    approve: {
      type: 'boolean' as const,
      title: 'Approve',
      description: 'Yes: the agent makes the call(s). No: the agent is told they were declined.',
    },
  },
  required: ['approve'],
};

/**
 * The requestState seal: HMAC under a key derived from SECRETS_KEY (every
 * replica has it, so a retry may reach any of them), bound to the project
 * the request's path names. A day: a person may answer late.
 */
export function approvalCodec(secretsKey: Buffer): RequestStateCodec<ApprovalState> {
  const key = createHash('sha256').update('mcp-door-request-state\0').update(secretsKey).digest();
  return createRequestStateCodec<ApprovalState>({
    key,
    ttlSeconds: 24 * 60 * 60,
    bind: (ctx: ServerContext) => {
      const project = ctx.http?.authInfo?.extra?.projectId;
      return typeof project === 'string' ? project : '';
    },
  });
}

/** Whether the caller can be asked (declared form elicitation), in either revision. */
export function canAsk(
  ctx: ServerContext,
  legacyCapabilities: { elicitation?: unknown } | undefined,
): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const caps =
    (envelope?.[CLIENT_CAPABILITIES_META_KEY] as { elicitation?: unknown } | undefined) ?? legacyCapabilities;
  const elicitation = caps?.elicitation as { form?: unknown; url?: unknown } | undefined;
  // `{}` predates modes and means form; a client declaring only `url` cannot show our form.
  return elicitation !== undefined && (elicitation.form !== undefined || elicitation.url === undefined);
}

/** The question for the paused run, with the state that brings its answer back to it. */
export async function approvalQuestion(
  view: RunView,
  agentName: string,
  codec: RequestStateCodec<ApprovalState>,
  ctx: ServerContext,
): Promise<InputRequiredResult> {
  const calls = view.pending_approvals.map(callText).join(', ');
  return inputRequired({
    inputRequests: {
      [APPROVAL_KEY]: inputRequired.elicit({
        message: `The agent "${agentName}" wants to call ${calls}. Approve?`,
        requestedSchema: APPROVAL_FORM,
      }),
    },
    requestState: await codec.mint({ runId: view.run_id, agentId: view.agent_id ?? '' }, ctx),
  });
}

/** The answer a retried call carries: accepted with approve yes or no, declined (no), else undecided. */
export function approvalAnswer(ctx: ServerContext): ApprovalAnswer {
  const view = inputResponse(ctx.mcpReq.inputResponses, APPROVAL_KEY);
  if (view.kind !== 'elicit') return 'undecided';
  if (view.action === 'decline') return 'reject';
  if (view.action !== 'accept') return 'undecided';
  const approve = view.content?.approve;
  if (approve === true) return 'approve';
  if (approve === false) return 'reject';
  return 'undecided';
}
