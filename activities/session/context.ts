/**
 * How a turn's model context is built from the stored thread: pure functions
 * over message rows, so the summarizer rules are unit-tested exactly.
 */
import type { ContentPart, LlmMessage, ToolCall } from '../../core/llm/types.js';

export interface StoredMessage {
  id: string;
  seq: number;
  run_id: string | null;
  role: 'user' | 'assistant' | 'tool' | 'system';
  content: unknown;
  tool_calls: ToolCall[] | null;
  tool_call_id: string | null;
  hidden: boolean;
  /** When the row's run began (ms): turns run one at a time, so this orders them. */
  turn_at?: number;
  /** The row's run is queued behind the current one: not part of this turn's past. */
  pending?: boolean;
}

export type SummarizerType = 'none' | 'sliding_window' | 'llm';

export interface HistoryOptions {
  currentRunId: string;
  enableHistory: boolean;
  summarizer: SummarizerType;
  /** sliding_window: turns kept, the current one included. */
  keepTurns?: number;
  /** llm: the stored summary covers messages up to this seq. */
  summaryThroughSeq?: number;
}

/**
 * What a turn sees, in conversation order: hidden rows (corrective exchanges)
 * only within their own run, and each run's messages together. A user message
 * is stored when it arrives, so one sent while an earlier turn was running
 * has a lower seq than that turn's answer; it belongs after it.
 */
function visible(rows: StoredMessage[], currentRunId: string): StoredMessage[] {
  const kept = rows.filter(
    (r) => r.role !== 'system' && (r.run_id === currentRunId || (!r.pending && !r.hidden)),
  );
  if (!kept.some((r) => r.turn_at !== undefined)) return kept;
  // Rows without a run (imported history) keep their place by seq, before any run.
  return kept.sort((a, b) => (a.turn_at ?? 0) - (b.turn_at ?? 0) || a.seq - b.seq);
}

/** Turns: a visible user message and everything after it up to the next one. */
export function groupTurns(rows: StoredMessage[]): StoredMessage[][] {
  const turns: StoredMessage[][] = [];
  for (const r of rows) {
    if ((r.role === 'user' && !r.hidden) || turns.length === 0) turns.push([r]);
    else turns[turns.length - 1]!.push(r);
  }
  return turns;
}

/** The thread rows sent to the model this step, oldest first. */
export function selectHistory(rows: StoredMessage[], opts: HistoryOptions): StoredMessage[] {
  const seen = visible(rows, opts.currentRunId);
  if (!opts.enableHistory) return seen.filter((r) => r.run_id === opts.currentRunId);
  switch (opts.summarizer) {
    case 'sliding_window': {
      const keep = Math.max(1, opts.keepTurns ?? 1);
      return groupTurns(seen).slice(-keep).flat();
    }
    case 'llm': {
      const through = opts.summaryThroughSeq;
      return through === undefined ? seen : seen.filter((r) => r.seq > through);
    }
    default:
      return seen;
  }
}

/**
 * What an llm summarization would fold into the summary: the turns after the
 * previous summary, except the last `keepRecent` (at least the current one).
 * Returns undefined when there is nothing older to fold.
 */
export function summarizationSlice(
  rows: StoredMessage[],
  currentRunId: string,
  keepRecent: number,
  previousThroughSeq?: number,
): { older: StoredMessage[]; throughSeq: number } | undefined {
  const seen = visible(rows, currentRunId).filter(
    (r) => previousThroughSeq === undefined || r.seq > previousThroughSeq,
  );
  const turns = groupTurns(seen);
  const keep = Math.max(1, keepRecent);
  if (turns.length <= keep) return undefined;
  const older = turns.slice(0, turns.length - keep).flat();
  return { older, throughSeq: older[older.length - 1]!.seq };
}

/** About four characters per token: used before the provider has reported any. */
export function estimateTokens(texts: Array<string | undefined>): number {
  let chars = 0;
  for (const t of texts) chars += t?.length ?? 0;
  return Math.ceil(chars / 4);
}

export function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((p: { type?: string; text?: string; image_url?: { url?: string } }) =>
        p.type === 'text'
          ? (p.text ?? '')
          : p.type === 'image_url'
            ? `[image ${p.image_url?.url?.slice(0, 80) ?? ''}]`
            : '',
      )
      .join('');
  return content == null ? '' : JSON.stringify(content);
}

/** A stored user message (text, or OpenAI-style parts with text and image_url) as internal parts. */
export function toContentParts(content: unknown): ContentPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [{ type: 'text', text: messageText(content) }];
  const parts: ContentPart[] = [];
  for (const p of content as Array<{ type?: string; text?: string; image_url?: { url?: string } }>) {
    if (p.type === 'text') parts.push({ type: 'text', text: p.text ?? '' });
    else if (p.type === 'image_url' && p.image_url?.url) {
      const url = p.image_url.url;
      const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
      parts.push({
        type: 'image',
        source: data ? { kind: 'base64', media_type: data[1]!, data: data[2]! } : { kind: 'url', url },
      });
    }
  }
  return parts;
}

export function toLlmMessages(rows: StoredMessage[]): LlmMessage[] {
  const out: LlmMessage[] = [];
  for (const r of rows) {
    if (r.role === 'user') out.push({ role: 'user', content: toContentParts(r.content) });
    else if (r.role === 'assistant') {
      const text = messageText(r.content);
      out.push({
        role: 'assistant',
        content: text ? [{ type: 'text', text }] : [],
        ...(r.tool_calls?.length ? { tool_calls: r.tool_calls } : {}),
      });
    } else if (r.role === 'tool') {
      const name = r.tool_calls?.[0]?.name;
      out.push({
        role: 'tool',
        tool_call_id: r.tool_call_id ?? '',
        content: messageText(r.content),
        ...(name ? { name } : {}),
      });
    }
  }
  return out;
}

/** The text a summarizer model reads: the previous summary, then the turns to fold, one line per message. */
export function transcriptForSummary(previousSummary: string | undefined, rows: StoredMessage[]): string {
  const lines: string[] = [];
  if (previousSummary) lines.push(`Summary so far: ${previousSummary}`, '');
  for (const r of rows) {
    if (r.role === 'tool') lines.push(`tool (${r.tool_call_id ?? ''}): ${messageText(r.content)}`);
    else if (r.role === 'assistant' && r.tool_calls?.length) {
      const text = messageText(r.content);
      lines.push(
        `assistant: ${text}${text ? ' ' : ''}[calls ${r.tool_calls.map((c) => `${c.name}(${c.arguments})`).join(', ')}]`,
      );
    } else lines.push(`${r.role}: ${messageText(r.content)}`);
  }
  return lines.join('\n');
}
