/**
 * The form an MCP server asks a person to fill (elicitation): its
 * `requested_schema` is a flat JSON Schema object whose properties are
 * strings (free text, a format, or a choice), numbers, integers, booleans,
 * or lists of choices. Pure, so the form and its answer are tested apart
 * from the page.
 */

export interface Choice {
  value: string;
  label: string;
}

export interface AskedField {
  name: string;
  kind: 'text' | 'number' | 'integer' | 'boolean' | 'choice' | 'choices';
  label: string;
  description?: string;
  required: boolean;
  /** For a text field: the input type its `format` suggests (email, url, date). */
  format?: string;
  choices?: Choice[];
  min?: number;
  max?: number;
}

/** What the form holds for each field: text for text, choices and numbers, a flag, or a list. */
export type AskedValue = string | number | boolean | string[];
export type AskedValues = Record<string, AskedValue>;

type Schema = Record<string, unknown>;

const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** The choices of `enum` (named by `enumNames` when given) or of `oneOf`/`anyOf` `{const, title}`. */
function choicesOf(p: Schema): Choice[] | undefined {
  if (Array.isArray(p.enum)) {
    const names = Array.isArray(p.enumNames) ? p.enumNames : [];
    return p.enum.map((v, i) => ({ value: String(v), label: text(names[i]) ?? String(v) }));
  }
  const options = Array.isArray(p.oneOf) ? p.oneOf : Array.isArray(p.anyOf) ? p.anyOf : undefined;
  if (!options) return undefined;
  return options
    .filter(isObject)
    .filter((o) => o.const !== undefined)
    .map((o) => ({ value: String(o.const), label: text(o.title) ?? String(o.const) }));
}

function kindOf(p: Schema, choices: Choice[] | undefined): AskedField['kind'] {
  if (p.type === 'boolean') return 'boolean';
  if (p.type === 'integer') return 'integer';
  if (p.type === 'number') return 'number';
  if (p.type === 'array') return 'choices';
  return choices ? 'choice' : 'text';
}

/**
 * The schema's properties as form fields: the required ones first, each
 * group in the schema's order (which a stored schema may not keep, so the
 * fields a person must fill lead).
 */
export function askedFields(schema: Schema | undefined): AskedField[] {
  const properties = isObject(schema?.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema?.required) ? schema.required.map(String) : []);
  return Object.entries(properties)
    .filter((entry): entry is [string, Schema] => isObject(entry[1]))
    .map(([name, p]) => {
      const choices = p.type === 'array' && isObject(p.items) ? choicesOf(p.items) : choicesOf(p);
      return {
        name,
        kind: kindOf(p, choices),
        label: text(p.title) ?? name,
        description: text(p.description),
        required: required.has(name),
        format: text(p.format),
        choices,
        min: num(p.minimum) ?? num(p.minLength),
        max: num(p.maximum) ?? num(p.maxLength),
      };
    })
    .sort((a, b) => Number(b.required) - Number(a.required));
}

/** Each field's starting value: the schema's `default`, else empty (unchecked, no choice). */
export function initialValues(schema: Schema | undefined, fields: AskedField[]): AskedValues {
  const properties = isObject(schema?.properties) ? schema.properties : {};
  const values: AskedValues = {};
  for (const f of fields) {
    const d = (properties[f.name] as Schema).default;
    if (f.kind === 'boolean') values[f.name] = d === true;
    else if (f.kind === 'choices') values[f.name] = Array.isArray(d) ? d.map(String) : [];
    else if (f.kind === 'number' || f.kind === 'integer') values[f.name] = typeof d === 'number' ? d : '';
    else values[f.name] = typeof d === 'string' || typeof d === 'number' ? String(d) : '';
  }
  return values;
}

/**
 * The answer's `content`: what the person filled, typed as the schema says.
 * A field left empty is left out (the API fills in the schema's defaults and
 * names a required field that is missing); a number that does not parse is
 * sent as typed, for the API to name.
 */
export function contentOf(fields: AskedField[], values: AskedValues): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  for (const f of fields) {
    const v = values[f.name];
    if (f.kind === 'boolean') content[f.name] = v === true;
    else if (f.kind === 'choices') {
      if (Array.isArray(v) && v.length > 0) content[f.name] = v;
    } else if (f.kind === 'number' || f.kind === 'integer') {
      if (typeof v === 'number') content[f.name] = v;
      else if (typeof v === 'string' && v.trim() !== '')
        content[f.name] = Number.isNaN(Number(v)) ? v : Number(v);
    } else if (typeof v === 'string' && v !== '') content[f.name] = v;
  }
  return content;
}

/** The input type a text field's `format` suggests to the browser. */
export function inputType(format: string | undefined): string {
  if (format === 'email') return 'email';
  if (format === 'uri') return 'url';
  if (format === 'date') return 'date';
  return 'text';
}
