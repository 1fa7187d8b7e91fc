import { describe, expect, it } from 'vitest';
import {
  groupTurns,
  selectHistory,
  summarizationSlice,
  toContentParts,
  transcriptForSummary,
  type StoredMessage,
} from '../../activities/session/context.js';

let seq = 0;
const msg = (
  run: string | null,
  role: StoredMessage['role'],
  content: unknown,
  extra: Partial<StoredMessage> = {},
): StoredMessage => ({
  id: `m${++seq}`,
  seq,
  run_id: run,
  role,
  content,
  tool_calls: null,
  tool_call_id: null,
  hidden: false,
  ...extra,
});

/** Three finished turns r1..r3 and the current one r4. */
function thread(): StoredMessage[] {
  seq = 0;
  return [
    msg('r1', 'user', 'u1', { turn_at: 1 }),
    msg('r1', 'assistant', 'a1', { turn_at: 1 }),
    msg('r2', 'user', 'u2', { turn_at: 2 }),
    msg('r2', 'assistant', '', { turn_at: 2, tool_calls: [{ id: 'c1', name: 't', arguments: '{}' }] }),
    msg('r2', 'tool', 'result', { turn_at: 2, tool_call_id: 'c1' }),
    msg('r2', 'assistant', 'a2', { turn_at: 2 }),
    msg('r3', 'user', 'u3', { turn_at: 3 }),
    msg('r3', 'assistant', 'bad json', { turn_at: 3, hidden: true }),
    msg('r3', 'user', 'correct it', { turn_at: 3, hidden: true }),
    msg('r3', 'assistant', 'a3', { turn_at: 3 }),
    msg('r4', 'user', 'u4', { turn_at: 4 }),
  ];
}
const contents = (rows: StoredMessage[]) => rows.map((r) => r.content);

describe('session context', () => {
  it('none: the whole thread without hidden corrective exchanges of other turns', () => {
    expect(
      contents(selectHistory(thread(), { currentRunId: 'r4', enableHistory: true, summarizer: 'none' })),
    ).toEqual(['u1', 'a1', 'u2', '', 'result', 'a2', 'u3', 'a3', 'u4']);
  });

  it("keeps the current turn's own hidden messages (its corrective retry)", () => {
    const rows = thread().slice(0, 9);
    expect(
      contents(selectHistory(rows, { currentRunId: 'r3', enableHistory: true, summarizer: 'none' })).slice(
        -3,
      ),
    ).toEqual(['u3', 'bad json', 'correct it']);
  });

  it('sliding_window keeps whole turns, tool calls with their results', () => {
    expect(
      contents(
        selectHistory(thread(), {
          currentRunId: 'r4',
          enableHistory: true,
          summarizer: 'sliding_window',
          keepTurns: 3,
        }),
      ),
    ).toEqual(['u2', '', 'result', 'a2', 'u3', 'a3', 'u4']);
    expect(groupTurns(thread())).toHaveLength(4);
  });

  it('enable_history false: only the current run', () => {
    expect(
      contents(selectHistory(thread(), { currentRunId: 'r4', enableHistory: false, summarizer: 'none' })),
    ).toEqual(['u4']);
  });

  it('llm: the messages after the summary; the slice to fold stops before the kept turns', () => {
    const rows = thread();
    const slice = summarizationSlice(rows, 'r4', 2)!;
    expect(contents(slice.older)).toEqual(['u1', 'a1', 'u2', '', 'result', 'a2']);
    expect(slice.throughSeq).toBe(6);
    expect(
      contents(
        selectHistory(rows, {
          currentRunId: 'r4',
          enableHistory: true,
          summarizer: 'llm',
          summaryThroughSeq: 6,
        }),
      ),
    ).toEqual(['u3', 'a3', 'u4']);
    // Nothing older than the kept turns: nothing to fold; never the newest message.
    expect(summarizationSlice(rows, 'r4', 4)).toBeUndefined();
    expect(summarizationSlice(rows, 'r4', 0)!.older.map((r) => r.content)).not.toContain('u4');
    expect(transcriptForSummary('earlier', slice.older)).toBe(
      'Summary so far: earlier\n\nuser: u1\nassistant: a1\nuser: u2\nassistant: [calls t({})]\ntool (c1): result\nassistant: a2',
    );
  });

  it('orders turns by when they ran, and leaves out turns still queued', () => {
    seq = 0;
    // r2's message arrived (stored) while r1 was running; r3 is queued behind r2.
    const rows = [
      msg('r1', 'user', 'u1', { turn_at: 1 }),
      msg('r2', 'user', 'u2', { turn_at: 2 }),
      msg('r3', 'user', 'u3', { turn_at: 3, pending: true }),
      msg('r1', 'assistant', 'a1', { turn_at: 1 }),
    ];
    expect(
      contents(selectHistory(rows, { currentRunId: 'r2', enableHistory: true, summarizer: 'none' })),
    ).toEqual(['u1', 'a1', 'u2']);
  });

  it('turns content parts into text and images (URL or base64 data URL)', () => {
    expect(
      toContentParts([
        { type: 'text', text: 'look' },
        { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
      ]),
    ).toEqual([
      { type: 'text', text: 'look' },
      { type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' } },
      { type: 'image', source: { kind: 'base64', media_type: 'image/png', data: 'AAAA' } },
    ]);
  });
});
