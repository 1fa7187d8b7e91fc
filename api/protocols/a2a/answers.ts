import type { Message } from '@a2a-js/sdk';
import type { DbRun } from '../../../core/db/tables/index.js';
import { ValidationError } from '../../../core/errors.js';
import { hashState } from '../../../core/mcp/oauth/index.js';
import type { A2aServices } from './services.js';

type Answer = Record<string, unknown>;

const FIELD = 'message.parts';

/** What the message says: its first data part (an object), else its words as `{word}`. */
function answerOf(message: Message): Answer {
  for (const p of message.parts)
    if (p.content?.$case === 'data' && p.content.value && typeof p.content.value === 'object')
      return p.content.value as Answer;
  const words = message.parts
    .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
    .join(' ')
    .trim()
    .toLowerCase();
  return { word: words };
}

const refuse = (expected: string): ValidationError =>
  ValidationError.field(FIELD, `${FIELD} must answer the wait: ${expected}`, 'any.only');

function oneOf<T extends string>(a: Answer, allowed: readonly T[], expected: string): T {
  const v = typeof a.action === 'string' ? a.action : a.word;
  if (typeof v !== 'string' || !allowed.includes(v as T)) throw refuse(expected);
  return v as T;
}

const APPROVE = new Set(['approve', 'approved', 'yes', 'y', 'ok']);
const REJECT = new Set(['reject', 'rejected', 'no', 'n', 'deny']);

/** `{approved: bool}` (every call), `{approved_call_ids, rejected_call_ids}`, or the words approve / reject. */
function approvals(run: DbRun, a: Answer): { approved_call_ids: string[]; rejected_call_ids: string[] } {
  const pending = (run.pending_approvals ?? []).map((p) => String(p.id));
  if (Array.isArray(a.approved_call_ids) || Array.isArray(a.rejected_call_ids))
    return {
      approved_call_ids: ((a.approved_call_ids as unknown[]) ?? []).map(String),
      rejected_call_ids: ((a.rejected_call_ids as unknown[]) ?? []).map(String),
    };
  const all =
    typeof a.approved === 'boolean'
      ? a.approved
      : APPROVE.has(String(a.word))
        ? true
        : REJECT.has(String(a.word))
          ? false
          : undefined;
  if (all === undefined)
    throw refuse(
      '{"approved": true | false}, {"approved_call_ids": [...], "rejected_call_ids": [...]}, or "approve" / "reject"',
    );
  return all
    ? { approved_call_ids: pending, rejected_call_ids: [] }
    : { approved_call_ids: [], rejected_call_ids: pending };
}

/**
 * Whether a person can still authorize at the wait's URL: the flow its
 * `state` names is neither used nor expired. Once used (by our callback,
 * which wakes the run itself) or expired (the URL leads nowhere now), a
 * message on the task is worth waking the run for.
 */
async function authorizationOpen(services: A2aServices, url: unknown): Promise<boolean> {
  if (typeof url !== 'string') return false;
  let state: string | null;
  try {
    state = new URL(url).searchParams.get('state');
  } catch {
    return false;
  }
  if (!state) return false;
  const flow = await services.oauthFlows.flow(hashState(state));
  return flow !== undefined && flow.used_at === null && flow.expires_at.getTime() > Date.now();
}

/**
 * The next message on a task that waits: the answer to its wait, given
 * through the same services as our own decision endpoints (the task goes on
 * as the same run). AUTH_REQUIRED: while the person can still authorize at
 * the URL the task gave, the message changes nothing (false: the task is
 * answered as it stands); otherwise the run is woken as our OAuth callback
 * wakes it, and tries again (it waits again, with a fresh URL, if not
 * authorized). True when the wait was answered.
 */
export async function answerWait(services: A2aServices, run: DbRun, message: Message): Promise<boolean> {
  const a = answerOf(message);
  const { converse, waits } = services;
  switch (run.status) {
    case 'awaiting_approval':
      await converse.approve(run.id, run.project_id, approvals(run, a));
      return true;
    case 'awaiting_input': {
      const action =
        typeof a.action === 'string' || a.word
          ? oneOf(
              a,
              ['accept', 'decline', 'cancel'] as const,
              '{"action": "accept", "content": {...}}, "decline" or "cancel"',
            )
          : 'accept';
      const content = a.action === undefined && a.word === undefined ? a : a.content;
      if (action === 'accept' && (content === null || typeof content !== 'object' || Array.isArray(content)))
        throw refuse('{"action": "accept", "content": {...}} (content an object)');
      await waits.input(run.id, run.project_id, {
        action,
        ...(action === 'accept' ? { content: content as Record<string, unknown> } : {}),
      });
      return true;
    }
    case 'awaiting_decision': {
      const action = oneOf(
        a,
        ['retry', 'supply'] as const,
        '{"action": "retry"} or {"action": "supply", "result": {"output": "..."}}',
      );
      const result = a.result as { output?: unknown; is_error?: unknown } | undefined;
      if (action === 'supply' && typeof result?.output !== 'string')
        throw refuse('{"action": "supply", "result": {"output": "text"}}');
      await waits.decide(run.id, run.project_id, {
        action,
        ...(action === 'supply'
          ? { result: { output: result!.output as string, is_error: Boolean(result!.is_error) } }
          : {}),
      });
      return true;
    }
    case 'awaiting_budget':
      await waits.budget(
        run.id,
        run.project_id,
        oneOf(a, ['resume', 'cancel'] as const, '"resume" or "cancel"'),
      );
      return true;
    case 'awaiting_authorization': {
      const d = (run.pause?.details ?? {}) as {
        server_id?: string;
        end_user_id?: string | null;
        authorization_url?: unknown;
      };
      if (await authorizationOpen(services, d.authorization_url)) return false;
      if (d.server_id) await waits.authorized(d.server_id, d.end_user_id ?? null);
      return true;
    }
    default:
      return false;
  }
}
