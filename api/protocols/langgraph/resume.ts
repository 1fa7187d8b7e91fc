import type { DbRun } from '../../../core/db/tables/index.js';
import { ValidationError } from '../../../core/errors.js';
import type { ThreadRow } from '../../../core/repositories/protocol-threads.repository.js';
import { ProtocolError } from './errors.js';
import type { DoorServices } from './services.js';

type Decision = { type?: unknown; message?: unknown };

/** `{resume: {<interrupt id>: value}}` names the interrupt; a bare value answers the one waiting. */
function valueFor(run: DbRun, resume: unknown): unknown {
  if (resume && typeof resume === 'object' && !Array.isArray(resume) && run.id in resume)
    return (resume as Record<string, unknown>)[run.id];
  return resume;
}

/**
 * An approval's decisions, in the order of the interrupt's `actionRequests`:
 * `{decisions: [{type: "approve" | "reject"}]}` as LangChain's human-in-the-loop
 * middleware sends them (a bare list, or one word for every call, also do).
 */
function approvals(run: DbRun, value: unknown): { approved: string[]; rejected: string[] } {
  const pending = (run.pending_approvals ?? []).map((p) => String(p.id));
  const raw: unknown = value && typeof value === 'object' && 'decisions' in value ? value.decisions : value;
  const list: Decision[] =
    typeof raw === 'string' || typeof raw === 'boolean'
      ? pending.map(() => ({ type: raw === true ? 'approve' : raw === false ? 'reject' : raw }))
      : Array.isArray(raw)
        ? (raw as Decision[])
        : [];
  if (list.length !== pending.length)
    throw ValidationError.field(
      'command.resume.decisions',
      `command.resume.decisions must hold one decision per pending action (${pending.length})`,
      'array.length',
    );
  const approved: string[] = [];
  const rejected: string[] = [];
  list.forEach((d, i) => {
    const type = typeof d === 'string' ? d : d?.type;
    if (type === 'approve') approved.push(pending[i]!);
    else if (type === 'reject') rejected.push(pending[i]!);
    else
      throw ValidationError.field(
        `command.resume.decisions.${i}.type`,
        `command.resume.decisions.${i}.type must be "approve" or "reject"` +
          (type === 'edit' ? ' (editing a call before it runs is not offered: reject it and say why)' : ''),
        'any.only',
      );
  });
  return { approved, rejected };
}

function action(value: unknown, allowed: string[], field: string): string {
  const a = typeof value === 'string' ? value : (value as { action?: unknown } | null)?.action;
  if (typeof a !== 'string' || !allowed.includes(a))
    throw ValidationError.field(
      field,
      `${field} must be one of ${allowed.map((x) => `"${x}"`).join(', ')}`,
      'any.only',
    );
  return a;
}

/**
 * `command: {resume}` on a thread: the decision on the run waiting there,
 * given through the same services as our own decision endpoints. The run
 * goes on (the protocol's "new run" is that same run).
 */
export async function resumeRun(
  door: DoorServices,
  projectId: string,
  thread: ThreadRow,
  resume: unknown,
): Promise<DbRun> {
  const run = (await door.repo.unfinished(thread.pk)).find((r) => r.status.startsWith('awaiting_'));
  if (!run) throw new ProtocolError(409, 'The thread has no interrupted run to resume');
  const value = valueFor(run, resume);
  switch (run.status) {
    case 'awaiting_approval': {
      const { approved, rejected } = approvals(run, value);
      await door.converse.approve(run.id, projectId, {
        approved_call_ids: approved,
        rejected_call_ids: rejected,
      });
      break;
    }
    case 'awaiting_input': {
      const a = action(value, ['accept', 'decline', 'cancel'], 'command.resume.action') as
        'accept' | 'decline' | 'cancel';
      const content = (value as { content?: unknown }).content;
      if (
        content !== undefined &&
        (typeof content !== 'object' || content === null || Array.isArray(content))
      )
        throw ValidationError.field('command.resume.content', 'content must be an object', 'object.base');
      await door.waits.input(run.id, projectId, {
        action: a,
        ...(a === 'accept' ? { content: (content ?? {}) as Record<string, unknown> } : {}),
      });
      break;
    }
    case 'awaiting_authorization':
      // The flow completes at our OAuth callback, which wakes the run: resuming here cannot stand in for it.
      throw new ProtocolError(
        409,
        'The run waits for an MCP server to be authorized: open the authorization_url of its interrupt',
      );
    case 'awaiting_budget':
      await door.waits.budget(
        run.id,
        projectId,
        action(value, ['resume', 'cancel'], 'command.resume.action') as 'resume' | 'cancel',
      );
      break;
    default: {
      const a = action(value, ['retry', 'supply'], 'command.resume.action') as 'retry' | 'supply';
      const result = (value as { result?: { output?: unknown; is_error?: unknown } }).result;
      if (a === 'supply' && typeof result?.output !== 'string')
        throw ValidationError.field(
          'command.resume.result.output',
          'supply needs result.output (text)',
          'any.required',
        );
      await door.waits.decide(run.id, projectId, {
        action: a,
        ...(a === 'supply'
          ? { result: { output: result!.output as string, is_error: Boolean(result!.is_error) } }
          : {}),
      });
    }
  }
  return run;
}
