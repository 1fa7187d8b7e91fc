/**
 * Arguments a model would plausibly send a tool, from the tool's JSON Schema:
 * every required property gets a simple value of its type (its default or
 * first enum value when it has one). Numbers count up from 2, so a tool like
 * `add_numbers(a, b)` gets `{a: 2, b: 3}`.
 */

type Schema = Record<string, unknown>;

export function argumentsFor(inputSchema: unknown): Record<string, unknown> {
  const counter = { next: 2 };
  const value = valueFor(isSchema(inputSchema) ? inputSchema : {}, counter, 0);
  return isSchema(value) ? value : {};
}

function isSchema(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The schema's type; a union (`["number", "null"]`, as strict tool schemas write optional fields) takes its first non-null member. */
function typeOf(schema: Schema): string {
  const t = schema.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) return (t.find((x) => x !== 'null') as string | undefined) ?? 'null';
  if (isSchema(schema.properties)) return 'object';
  const variant = [schema.anyOf, schema.oneOf].find(Array.isArray) as unknown[] | undefined;
  if (variant?.[0] && isSchema(variant[0])) return typeOf(variant[0]);
  return 'string';
}

function valueFor(schema: Schema, counter: { next: number }, depth: number): unknown {
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ('const' in schema) return schema.const;
  switch (typeOf(schema)) {
    case 'number':
    case 'integer':
      return counter.next++;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'null':
      return null;
    case 'object':
      return depth > 5 ? {} : objectFor(schema, counter, depth);
    default:
      return 'test';
  }
}

function objectFor(schema: Schema, counter: { next: number }, depth: number): Record<string, unknown> {
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const out: Record<string, unknown> = {};
  for (const name of required) {
    const property = properties[name];
    out[name] = valueFor(isSchema(property) ? property : {}, counter, depth + 1);
  }
  return out;
}
