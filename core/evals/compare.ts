/**
 * How an eval compares: tool-call arguments (a replayed call is answered from
 * the recording when its tool and arguments are the same) and answers (exact
 * match). Pure functions.
 */

/** JSON with every object's keys sorted, so key order never makes two values differ. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
  return out;
}

/** Arguments as the model wrote them (JSON text); unreadable JSON compares as its text. */
function parsed(args: string): unknown {
  try {
    return JSON.parse(args || '{}');
  } catch {
    return { __unparsed: args };
  }
}

/** The same arguments: deep-equal as JSON after sorting keys. */
export function sameArguments(a: string, b: string): boolean {
  return canonicalJson(parsed(a)) === canonicalJson(parsed(b));
}

/**
 * Whether the answer is exactly what was expected: text compared after
 * trimming; an expected JSON value (a dataset's expected_output) compared
 * with the answer read as JSON, keys sorted.
 */
export function exactMatch(answer: string | null, expected: unknown): boolean {
  if (answer === null || expected === null || expected === undefined) return false;
  if (typeof expected === 'string') return answer.trim() === expected.trim();
  try {
    return canonicalJson(JSON.parse(answer)) === canonicalJson(expected);
  } catch {
    return false;
  }
}
