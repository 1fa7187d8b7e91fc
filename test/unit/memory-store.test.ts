/**
 * The memory store's pure parts: what of an item is embedded (the Agent
 * Protocol's `index` paths) and how a search `filter` reads.
 */
import { describe, expect, it } from 'vitest';
import { parseFilter } from '../../core/memory/filter.js';
import { indexedText, pathTokens } from '../../core/memory/index-text.js';
import { validLabel } from '../../core/memory/namespace.js';

describe('indexedText', () => {
  const value = {
    title: 'Notes',
    body: { text: 'first', tags: ['a', 'b'] },
    chapters: [{ content: 'one' }, { content: 'two' }, { content: 'three' }],
    n: 4,
  };

  it('embeds the whole value as JSON without fields (or with `$`)', () => {
    expect(indexedText(value, null)).toBe(JSON.stringify(value));
    expect(indexedText(value, ['$'])).toBe(JSON.stringify(value));
  });

  it('takes the texts at dotted paths, list elements by [*] and [n], others as JSON, one per line', () => {
    expect(indexedText(value, ['title', 'body.text'])).toBe('Notes\nfirst');
    expect(indexedText(value, ['chapters[*].content'])).toBe('one\ntwo\nthree');
    expect(indexedText(value, ['chapters[-1].content', 'chapters[0].content'])).toBe('three\none');
    expect(indexedText(value, ['body.tags', 'n'])).toBe('["a","b"]\n4');
  });

  it('is empty when no field is there, or none is named (nothing is embedded)', () => {
    expect(indexedText(value, ['missing', 'title.deeper', 'chapters[9].content'])).toBe('');
    expect(indexedText(value, [])).toBe('');
  });

  it('tokenizes paths', () => {
    expect(pathTokens('a.b[*].c')).toEqual(['a', 'b', '[*]', 'c']);
    expect(pathTokens('[0]')).toEqual(['[0]']);
  });
});

describe('parseFilter', () => {
  it('reads plain values as equality and operator objects as each operator', () => {
    expect(parseFilter({ kind: 'note', meta: { a: 1 }, n: { $gte: 2, $lt: 5 }, t: { $in: ['x'] } })).toEqual([
      { field: 'kind', condition: { op: '$eq', value: 'note' } },
      { field: 'meta', condition: { op: '$eq', value: { a: 1 } } },
      { field: 'n', condition: { op: '$gte', value: 2 } },
      { field: 'n', condition: { op: '$lt', value: 5 } },
      { field: 't', condition: { op: '$in', value: ['x'] } },
    ]);
    expect(parseFilter(undefined)).toEqual([]);
  });

  it('names the field of an unknown operator or a bad operand', () => {
    expect(parseFilter({ n: { $near: 1 } })).toEqual({
      field: 'n',
      message: 'unknown filter operator "$near"',
    });
    expect(parseFilter({ n: { $gt: true } })).toMatchObject({ field: 'n' });
    expect(parseFilter({ n: { $in: 'x' } })).toMatchObject({ field: 'n', message: '"$in" takes a list' });
  });
});

describe('namespace labels', () => {
  it('cannot be empty or contain a period', () => {
    expect(['users', 'u-1', '*'].every(validLabel)).toBe(true);
    expect(['', 'a.b', 3].some(validLabel)).toBe(false);
  });
});
