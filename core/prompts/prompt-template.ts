/**
 * Prompt templates: text with `{{variable}}` placeholders (whitespace inside
 * the braces is allowed: `{{ user.name }}`). The API validates templates when
 * a version is written; agent sessions render them with a conversation's
 * context.
 *
 * Single braces are ordinary text, so prompts can carry JSON examples such as
 * `{"a": {"b": 1}}`: a `}}` only counts as stray when no literal `{` is open
 * to absorb it. There is no escape for a literal `{{`: a template needing one
 * is better served by rewording than by a second syntax to learn.
 */

export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_.]*$/;

/** Thrown by `validateTemplate`/`renderTemplate` when a template's placeholders are malformed; `offset` is where. */
export class TemplateSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
    this.name = 'TemplateSyntaxError';
  }
}

type Segment = { text: string } | { variable: string };

function parse(template: string): Segment[] {
  const segments: Segment[] = [];
  let text = '';
  let literalDepth = 0; // single `{` of ordinary text, e.g. JSON examples
  let i = 0;
  while (i < template.length) {
    const ch = template[i];
    if (ch === '{' && template[i + 1] === '{') {
      const end = template.indexOf('}}', i + 2);
      if (end === -1) throw new TemplateSyntaxError(`unclosed "{{" at offset ${i}`, i);
      const inner = template.slice(i + 2, end);
      const name = inner.trim();
      if (!VARIABLE_NAME.test(name)) {
        throw new TemplateSyntaxError(
          `invalid variable name "${inner}" at offset ${i}: names match ${VARIABLE_NAME.source}`,
          i,
        );
      }
      if (text) segments.push({ text });
      text = '';
      segments.push({ variable: name });
      i = end + 2;
      continue;
    }
    if (ch === '{') literalDepth++;
    else if (ch === '}') {
      if (literalDepth > 0) literalDepth--;
      else if (template[i + 1] === '}') throw new TemplateSyntaxError(`unmatched "}}" at offset ${i}`, i);
    }
    text += ch;
    i++;
  }
  if (text) segments.push({ text });
  return segments;
}

/** Checks the placeholders and returns the variable names used, in first-use order. Throws TemplateSyntaxError. */
export function validateTemplate(template: string): string[] {
  const names = new Set<string>();
  for (const s of parse(template)) if ('variable' in s) names.add(s.variable);
  return [...names];
}

/** An exact key wins (`{"user.name": …}`); otherwise dots walk into nested objects. */
function lookup(variables: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(variables, name)) return variables[name];
  let value: unknown = variables;
  for (const part of name.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return JSON.stringify(value);
}

/**
 * Fills the placeholders. A missing (or null) variable renders empty and is
 * reported in `missing`, so the caller decides whether that is an error.
 */
export function renderTemplate(
  template: string,
  variables: Record<string, unknown>,
): { text: string; missing: string[] } {
  const missing = new Set<string>();
  let text = '';
  for (const s of parse(template)) {
    if ('text' in s) {
      text += s.text;
      continue;
    }
    const value = lookup(variables, s.variable);
    if (value === undefined || value === null) missing.add(s.variable);
    else text += stringify(value);
  }
  return { text, missing: [...missing] };
}
