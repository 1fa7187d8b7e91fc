/**
 * A cron as the Agent Protocol shows it (`Cron` of @langchain/langgraph-sdk),
 * plus our `timezone`, `overlap_policy` and the Temporal UI link.
 */
import type { Config } from '../../../core/config.js';
import type { DbCron } from '../../../core/db/tables/index.js';
import { ValidationError } from '../../../core/errors.js';
import { cronScheduleUiUrl } from '../../services/crons.service.js';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function protocolCron(row: DbCron, config: Config): Record<string, unknown> {
  return {
    cron_id: row.id,
    assistant_id: row.agent_id,
    thread_id: row.conversation_id,
    schedule: row.schedule,
    timezone: row.timezone,
    end_time: iso(row.end_time),
    next_run_date: iso(row.next_run_date),
    enabled: !row.paused,
    overlap_policy: row.overlap_policy,
    ...(row.on_run_completed ? { on_run_completed: row.on_run_completed } : {}),
    payload: { assistant_id: row.agent_id, ...row.payload },
    metadata: row.metadata,
    user_id: null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    temporal_ui_url: cronScheduleUiUrl(config, row.id),
  };
}

/** Only the fields asked for (`select`); all of them when none are. */
export function selected(
  view: Record<string, unknown>,
  select: string[] | null | undefined,
): Record<string, unknown> {
  if (!select?.length) return view;
  return Object.fromEntries(select.filter((f) => f in view).map((f) => [f, view[f]]));
}

const HUMAN = new Set(['human', 'user']);

/** A message's text: a string, or the text of its `{type: "text", text}` blocks. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b: { type?: unknown; text?: unknown }) =>
      b.type === 'text' && typeof b.text === 'string' ? b.text : '',
    )
    .join('');
}

/**
 * The message each run sends: the text of the last human message of
 * `input.messages` (`{type: "human"}` or `{role: "user"}`); a 422 naming
 * `input.messages` without one.
 */
export function cronMessage(input: { messages: Array<Record<string, unknown>> }): string {
  const human = [...input.messages]
    .reverse()
    .find((m) => [m.type, m.role].some((t) => typeof t === 'string' && HUMAN.has(t)));
  const text = human ? textOf(human.content) : '';
  if (text.trim() === '')
    throw ValidationError.field(
      'input.messages',
      'input.messages must hold a human message with text (content a string or text blocks)',
      'any.required',
    );
  return text;
}
