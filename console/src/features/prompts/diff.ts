/**
 * A line diff (longest common subsequence), pure, for the prompt version
 * view. Common leading and trailing lines are matched first; the middle is
 * diffed by LCS when it is small enough (MAX_CELLS), and shown as all
 * removed then all added when it is not, so a huge template cannot hang the page.
 */

export type Op = 'same' | 'del' | 'add';
export interface DiffLine {
  op: Op;
  text: string;
  /** 1-based line number in the old text (same, del). */
  oldLine?: number;
  /** 1-based line number in the new text (same, add). */
  newLine?: number;
}

export const MAX_CELLS = 4_000_000;

export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(/\r?\n/);
  // A final newline ends the last line; it does not start an empty one.
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

function lcsOps(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  if (n * m > MAX_CELLS) return [...a.map((): Op => 'del'), ...b.map((): Op => 'add')];
  // lengths[i][j]: LCS length of a[i..] and b[j..], in one flat array.
  const w = m + 1;
  const lengths = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lengths[i * w + j] =
        a[i] === b[j]
          ? lengths[(i + 1) * w + j + 1]! + 1
          : Math.max(lengths[(i + 1) * w + j]!, lengths[i * w + j + 1]!);
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push('same');
      i++;
      j++;
    } else if (lengths[(i + 1) * w + j]! >= lengths[i * w + j + 1]!) {
      ops.push('del');
      i++;
    } else {
      ops.push('add');
      j++;
    }
  }
  while (i++ < n) ops.push('del');
  while (j++ < m) ops.push('add');
  return ops;
}

export function diffLines(oldText: string, newText: string): DiffLine[] {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail++;
  const ops: Op[] = [
    ...Array<Op>(head).fill('same'),
    ...lcsOps(a.slice(head, a.length - tail), b.slice(head, b.length - tail)),
    ...Array<Op>(tail).fill('same'),
  ];
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  for (const op of ops) {
    if (op === 'same') out.push({ op, text: a[i]!, oldLine: ++i, newLine: ++j });
    else if (op === 'del') out.push({ op, text: a[i]!, oldLine: ++i });
    else out.push({ op, text: b[j]!, newLine: ++j });
  }
  return out;
}

export interface Side {
  op: Op;
  text: string;
  line: number;
}
/** One row of the side-by-side view: old on the left, new on the right; a changed line pairs its removal with its addition. */
export interface Row {
  left?: Side;
  right?: Side;
}

export function sideBySide(lines: DiffLine[]): Row[] {
  const rows: Row[] = [];
  let k = 0;
  while (k < lines.length) {
    const l = lines[k]!;
    if (l.op === 'same') {
      rows.push({
        left: { op: 'same', text: l.text, line: l.oldLine! },
        right: { op: 'same', text: l.text, line: l.newLine! },
      });
      k++;
      continue;
    }
    // A run of removals and additions: pair them up line by line.
    const dels: DiffLine[] = [];
    const adds: DiffLine[] = [];
    while (k < lines.length && lines[k]!.op !== 'same') {
      const x = lines[k++]!;
      (x.op === 'del' ? dels : adds).push(x);
    }
    for (let r = 0; r < Math.max(dels.length, adds.length); r++) {
      const d = dels[r];
      const a = adds[r];
      rows.push({
        left: d && { op: 'del', text: d.text, line: d.oldLine! },
        right: a && { op: 'add', text: a.text, line: a.newLine! },
      });
    }
  }
  return rows;
}

export function diffStats(lines: DiffLine[]): { added: number; removed: number } {
  return {
    added: lines.filter((l) => l.op === 'add').length,
    removed: lines.filter((l) => l.op === 'del').length,
  };
}
