import type { FieldError } from '../../core/errors.js';

/**
 * How deep request JSON may nest (the body itself is level 1). Recursive code
 * (joi, JSON.stringify, Postgres's jsonb parser) overflows its stack a few
 * thousand levels down; real configuration (JSON Schemas, model parameters,
 * template context) stays far below this.
 */
export const MAX_JSON_DEPTH = 64;

/** At most this many problems are reported for one request. */
const MAX_PROBLEMS = 20;

export type UnstorableKind = 'string.nul' | 'string.surrogate';

/**
 * Why Postgres cannot store `s` as sent, if it cannot: text refuses NUL, jsonb
 * refuses NUL and lone surrogates, and the driver would silently turn a lone
 * surrogate in text into U+FFFD (so the value read back would differ).
 */
export function unstorable(s: string): UnstorableKind | undefined {
  if (s.includes('\u0000')) return 'string.nul';
  if (!s.isWellFormed()) return 'string.surrogate';
  return undefined;
}

const WHAT: Record<UnstorableKind, string> = {
  'string.nul': 'a NUL character',
  'string.surrogate': 'an unpaired surrogate (not valid Unicode)',
};

/** One value still to visit; the path is rebuilt from `parent` only when a problem is found. */
interface Frame {
  value: unknown;
  key: string | undefined;
  parent: Frame | undefined;
  depth: number;
}

function pathOf(frame: Frame): string[] {
  const path: string[] = [];
  for (let f: Frame | undefined = frame; f?.key !== undefined; f = f.parent) path.push(f.key);
  return path.reverse();
}

/**
 * Finds the values of parsed request input (path params, query, JSON body)
 * that must be refused before anything else looks at them: strings (values
 * and keys) with a NUL or a lone surrogate, and containers nested deeper than
 * `maxDepth`. Iterative, so it cannot overflow the stack itself; one pass,
 * linear in the size of the input. Fields are named like joi's (dotted path;
 * `location` for the root); a bad key names the object holding it, and too
 * deep a value names its top-level field (`location` when the root is an array).
 */
export function findUnstorable(value: unknown, location: string, maxDepth = MAX_JSON_DEPTH): FieldError[] {
  const problems: FieldError[] = [];
  const field = (path: string[]) => (path.length > 0 ? path.join('.') : location);
  const stack: Frame[] = [{ value, key: undefined, parent: undefined, depth: 0 }];
  while (stack.length > 0 && problems.length < MAX_PROBLEMS) {
    const frame = stack.pop()!;
    const v = frame.value;
    if (typeof v === 'string') {
      const kind = unstorable(v);
      if (kind) {
        const name = field(pathOf(frame));
        problems.push({ field: name, message: `${name} must not contain ${WHAT[kind]}`, type: kind });
      }
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    const depth = frame.depth + 1;
    if (depth > maxDepth) {
      const name = Array.isArray(value) ? location : field(pathOf(frame).slice(0, 1));
      problems.push({
        field: name,
        message: `${name} is nested more than ${maxDepth} levels deep`,
        type: 'object.depth',
      });
      continue;
    }
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--)
        stack.push({ value: v[i], key: String(i), parent: frame, depth });
      continue;
    }
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const k = keys[i]!;
      const kind = unstorable(k);
      if (kind) {
        const name = field(pathOf(frame));
        problems.push({ field: name, message: `${name} has a key containing ${WHAT[kind]}`, type: kind });
        continue;
      }
      stack.push({ value: (v as Record<string, unknown>)[k], key: k, parent: frame, depth });
    }
  }
  return dedupe(problems);
}

/** One problem per field (a deep value reports its top-level field once). */
function dedupe(problems: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const id = `${p.field}\u0000${p.type}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}
