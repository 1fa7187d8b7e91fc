/**
 * The console's prompt diff (console/src/features/prompts/diff.ts): a line
 * LCS diff and its side-by-side rows.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  diffLines,
  diffStats,
  MAX_CELLS,
  sideBySide,
  splitLines,
} from '../../console/src/features/prompts/diff.js';

const text = (lines: string[]) => lines.join('\n');

describe('diffLines', () => {
  it('marks an added and a removed line, keeping the rest', () => {
    const d = diffLines(
      'You are helpful.\nBe brief.\nSay hi.',
      'You are helpful.\nBe thorough.\nSay hi.\nSign off.',
    );
    expect(d).toEqual([
      { op: 'same', text: 'You are helpful.', oldLine: 1, newLine: 1 },
      { op: 'del', text: 'Be brief.', oldLine: 2 },
      { op: 'add', text: 'Be thorough.', newLine: 2 },
      { op: 'same', text: 'Say hi.', oldLine: 3, newLine: 3 },
      { op: 'add', text: 'Sign off.', newLine: 4 },
    ]);
    expect(diffStats(d)).toEqual({ added: 2, removed: 1 });
  });

  it('treats a final newline as the end of the last line, and CRLF as LF', () => {
    expect(splitLines('a\nb\n')).toEqual(['a', 'b']);
    expect(splitLines('')).toEqual([]);
    expect(diffLines('a\r\nb\r\n', 'a\nb').every((l) => l.op === 'same')).toBe(true);
  });

  it('handles empty sides', () => {
    expect(diffLines('', 'x\ny').map((l) => l.op)).toEqual(['add', 'add']);
    expect(diffLines('x', '').map((l) => l.op)).toEqual(['del']);
    expect(diffLines('', '')).toEqual([]);
  });

  it('finds a longest common subsequence (minimal edits) and rebuilds both texts', () => {
    const lines = fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { maxLength: 12 });
    fc.assert(
      fc.property(lines, lines, (a, b) => {
        const d = diffLines(text(a), text(b));
        expect(d.filter((l) => l.op !== 'add').map((l) => l.text)).toEqual(splitLines(text(a)));
        expect(d.filter((l) => l.op !== 'del').map((l) => l.text)).toEqual(splitLines(text(b)));
        // Brute-force LCS length: the number of kept lines must equal it.
        const A = splitLines(text(a));
        const B = splitLines(text(b));
        const L = Array.from({ length: A.length + 1 }, () => Array<number>(B.length + 1).fill(0));
        for (let i = A.length - 1; i >= 0; i--)
          for (let j = B.length - 1; j >= 0; j--)
            L[i]![j] = A[i] === B[j] ? L[i + 1]![j + 1]! + 1 : Math.max(L[i + 1]![j]!, L[i]![j + 1]!);
        expect(d.filter((l) => l.op === 'same').length).toBe(L[0]![0]);
      }),
    );
  });

  it('does not hang on huge templates: past MAX_CELLS the middle is shown as replaced', () => {
    const n = Math.ceil(Math.sqrt(MAX_CELLS)) + 10;
    const a = Array.from({ length: n }, (_, i) => `old ${i}`);
    const b = Array.from({ length: n }, (_, i) => `new ${i}`);
    const d = diffLines(['head', ...a, 'tail'].join('\n'), ['head', ...b, 'tail'].join('\n'));
    expect(diffStats(d)).toEqual({ added: n, removed: n });
    expect(d[0]).toMatchObject({ op: 'same', text: 'head' });
    expect(d.at(-1)).toMatchObject({ op: 'same', text: 'tail' });
  });
});

describe('sideBySide', () => {
  it('pairs a removal with the addition that replaced it, and leaves unmatched sides empty', () => {
    const rows = sideBySide(diffLines('a\nb\nc', 'a\nB\nB2\nc'));
    expect(rows).toEqual([
      { left: { op: 'same', text: 'a', line: 1 }, right: { op: 'same', text: 'a', line: 1 } },
      { left: { op: 'del', text: 'b', line: 2 }, right: { op: 'add', text: 'B', line: 2 } },
      { left: undefined, right: { op: 'add', text: 'B2', line: 3 } },
      { left: { op: 'same', text: 'c', line: 3 }, right: { op: 'same', text: 'c', line: 4 } },
    ]);
  });
});
