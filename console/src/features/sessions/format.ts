/** Display helpers shared by the sessions, approvals and traces pages. */

import { formatUsd } from '../../lib/money.js';

export const dash = '—';

export function fmtDate(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : dash;
}

export function fmtDuration(ms: number | null | undefined): string {
  if (ms == null) return dash;
  if (ms === 0) return '0 ms';
  if (ms < 0.995) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const m = Math.floor(ms / 60_000);
  return `${m} m ${Math.round((ms % 60_000) / 1000)} s`;
}

export function fmtInt(n: number | null | undefined): string {
  return n == null ? dash : n.toLocaleString();
}

export function fmtCost(usd: number | null | undefined): string {
  return formatUsd(usd, dash);
}

export function fmtPercent(rate: number | null | undefined): string {
  return rate == null ? dash : `${(rate * 100).toFixed(rate < 0.1 && rate > 0 ? 1 : 0)}%`;
}

const STATUS_COLOURS: Record<string, string> = {
  queued: 'gray',
  running: 'blue',
  awaiting_approval: 'yellow',
  awaiting_budget: 'orange',
  awaiting_decision: 'grape',
  awaiting_authorization: 'cyan',
  awaiting_input: 'teal',
  completed: 'green',
  failed: 'red',
  cancelled: 'gray',
};

export function statusColour(status: string | undefined): string {
  return STATUS_COLOURS[status ?? ''] ?? 'gray';
}

/** Content as text: a string, or the text parts of a content-part array, else JSON. */
export function contentText(content: unknown): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p: unknown) => {
        if (p && typeof p === 'object' && 'text' in p && typeof p.text === 'string') return p.text;
        return JSON.stringify(p);
      })
      .join('\n');
  }
  return JSON.stringify(content, null, 2);
}

/** Pretty JSON for a JSON text (tool arguments), or the text itself. */
export function prettyJson(text: unknown): string {
  if (typeof text !== 'string') return JSON.stringify(text, null, 2);
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
