import { Ajv2020 } from 'ajv/dist/2020.js';
import { ValidationError } from '../../core/errors.js';

/**
 * Compiles a JSON Schema (draft 2020-12) or throws a 400 naming `field` with
 * ajv's own message. A fresh Ajv per call: a shared one would cache every
 * schema forever and refuse a second schema reusing an `$id`.
 *
 * Not strict: vendors' structured-output dialects carry extra keywords
 * (e.g. Gemini's `propertyOrdering`) that must not be refused. `format` stays
 * an annotation, as draft 2020-12 defines it, rather than failing on formats
 * ajv does not ship.
 */
export function compileJsonSchema(schema: Record<string, unknown>, field = 'schema'): void {
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true, logger: false });
  try {
    ajv.compile(schema);
  } catch (err) {
    throw ValidationError.field(field, (err as Error).message, 'schema.invalid');
  }
}
