import { ScimError } from './errors.js';

/** One `attribute eq value` comparison; a filter is their conjunction. */
export interface Equality {
  /** The attribute path, lower-cased (SCIM attribute names are case-insensitive). */
  attribute: string;
  value: string | boolean | null;
}

const invalidFilter = (detail: string) => new ScimError(400, 'invalidFilter', detail);

/** A JSON string literal at the start of `text`, and what follows it. */
function stringLiteral(text: string): [string, string] {
  const match = /^"(?:[^"\\]|\\.)*"/.exec(text);
  if (!match) throw invalidFilter('a string value must be in double quotes');
  try {
    return [JSON.parse(match[0]) as string, text.slice(match[0].length)];
  } catch {
    throw invalidFilter('a string value has a bad escape');
  }
}

/**
 * The filters identity providers send (RFC 7644 §3.4.2.2): `eq` comparisons
 * joined by `and`, e.g. `userName eq "ann@example.com"` or
 * `externalId eq "123" and active eq true`. Other operators, `or`, `not`
 * and brackets are refused with invalidFilter, never ignored: a filter
 * taken wider than asked would match the wrong resource.
 */
export function parseFilter(filter: string, attributes: readonly string[]): Equality[] {
  const out: Equality[] = [];
  let rest = filter.trim();
  for (;;) {
    const head = /^([A-Za-z][\w.:-]*)\s+([A-Za-z]+)\s+/.exec(rest);
    if (!head) throw invalidFilter(`cannot read the filter at: ${rest.slice(0, 60)}`);
    const attribute = head[1]!
      .toLowerCase()
      .replace(/^urn:ietf:params:scim:schemas:core:2\.0:(user|group):/, '');
    if (head[2]!.toLowerCase() !== 'eq')
      throw invalidFilter(`only the eq operator is supported, not ${head[2]}`);
    if (!attributes.includes(attribute))
      throw invalidFilter(`cannot filter on ${head[1]}; filter on one of ${attributes.join(', ')}`);
    rest = rest.slice(head[0].length);
    let value: Equality['value'];
    const word = /^(true|false|null)\b/i.exec(rest);
    if (word) {
      const w = word[1]!.toLowerCase();
      value = w === 'null' ? null : w === 'true';
      rest = rest.slice(word[0].length);
    } else [value, rest] = stringLiteral(rest);
    out.push({ attribute, value });
    rest = rest.trim();
    if (rest === '') return out;
    const and = /^and\s+/i.exec(rest);
    if (!and) throw invalidFilter(`only "and" may join comparisons, at: ${rest.slice(0, 60)}`);
    rest = rest.slice(and[0].length);
  }
}
