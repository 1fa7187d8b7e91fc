/**
 * What of an item is embedded: the texts at the fields named by the put's
 * `index` (or the project's default fields), else the whole value as JSON.
 * A field is a dotted path into the value; `[*]` takes every element of an
 * array and `[n]` one (negative from the end), as the Agent Protocol's
 * `index` paths do. Strings are taken as they are, other values as JSON.
 */

const asText = (v: unknown): string | undefined =>
  v === undefined || v === null ? undefined : typeof v === 'string' ? v : JSON.stringify(v);

/** `a.b[*].c` → `['a', 'b', '[*]', 'c']`. */
export function pathTokens(path: string): string[] {
  return path.match(/\[[^\]]*\]|[^.[\]]+/g) ?? [];
}

function at(value: unknown, tokens: string[]): unknown[] {
  if (tokens.length === 0) return [value];
  const [token, ...rest] = tokens as [string, ...string[]];
  if (token.startsWith('[')) {
    if (!Array.isArray(value)) return [];
    const index = token.slice(1, -1);
    if (index === '*') return value.flatMap((v) => at(v, rest));
    const n = Number(index);
    const element: unknown = Number.isInteger(n) ? value[n < 0 ? value.length + n : n] : undefined;
    return element === undefined ? [] : at(element, rest);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  return at((value as Record<string, unknown>)[token], rest);
}

/**
 * The text to embed for an item: one string (the fields' texts one per
 * line); no fields (null) or `$`: the whole value; empty when nothing
 * matched, or the list is empty (nothing is embedded).
 */
export function indexedText(value: Record<string, unknown>, fields: string[] | null | undefined): string {
  if (!fields || fields.includes('$')) return JSON.stringify(value);
  return fields
    .flatMap((f) => at(value, pathTokens(f)).map(asText))
    .filter((t): t is string => t !== undefined && t !== '')
    .join('\n');
}
