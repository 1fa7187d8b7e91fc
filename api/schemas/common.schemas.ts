import Joi from 'joi';

export const uuid = Joi.string().guid({
  version: ['uuidv1', 'uuidv4', 'uuidv5', 'uuidv7', 'uuidv8'],
  separator: '-',
});

export const idParams = Joi.object({ id: uuid.required() });

export const name = Joi.string().trim().min(1).max(200);

/**
 * A string that must match `pattern`, refused in plain words: joi's own
 * message names the pattern or prints the regular expression ("fails to
 * match the required pattern: /…/") and quotes the value, which may be a
 * credential. `allows` says what the pattern lets through, as the end of
 * "<field> must be …".
 */
export function matching(pattern: RegExp, allows: string): Joi.StringSchema {
  return Joi.string()
    .pattern(pattern, allows)
    .messages({ 'string.pattern.name': `{{#label}} must be ${allows}` });
}

export const description = Joi.string().max(10_000).allow('', null);

/** `limit` (default 50, max 200) and `offset`; lists are newest first. */
export const pagination = {
  limit: Joi.number().integer().min(1).max(200).default(50),
  offset: Joi.number().integer().min(0).max(1_000_000).default(0),
};

export type { Page } from '../../core/repositories/types.js';

/** `?project_id=` on create and list of project-scoped resources. */
export const projectQuery = { project_id: uuid.required() };
/** `?project_id=` optional on get/update/delete by id (must match when given). */
export const optionalProjectQuery = { project_id: uuid };

/**
 * A query parameter taking one or several of `values`, comma-separated
 * (`?status=failed,cancelled`) or repeated (`?status=failed&status=cancelled`);
 * validated to a list without duplicates, and documented as an array of the
 * values. Anything else is a 400 naming the parameter itself (not one of its
 * items). The splitting is a coercion of an `array` type (so the OpenAPI
 * document still says `array`), made per call to close over `values`.
 */
export function oneOrMore(values: readonly string[]): Joi.ArraySchema {
  const list = Joi.extend({
    type: 'array',
    base: Joi.array(),
    messages: {
      'array.oneOrMore': `{{#label}} must be one or more of ${values.join(', ')}, comma-separated or repeated (not "{{#unknown}}")`,
    },
    coerce: {
      from: ['string', 'object'],
      method(value: unknown, helpers) {
        if (typeof value !== 'string' && !Array.isArray(value)) return { value };
        const items = [value]
          .flat()
          .flatMap((v: unknown) => (typeof v === 'string' ? v.split(',') : [v]))
          .map((v) => (typeof v === 'string' ? v.trim() : v));
        const unknown = items.filter((v) => typeof v !== 'string' || !values.includes(v));
        if (unknown.length)
          return { value, errors: [helpers.error('array.oneOrMore', { unknown: unknown.join('", "') })] };
        return { value: [...new Set(items)] };
      },
    },
  }) as Joi.Root;
  return list
    .array()
    .items(Joi.string().valid(...values))
    .min(1)
    .description(`One or more of: ${values.join(', ')} (comma-separated or repeated)`);
}

/** An optional time window on a list: `start_time` (inclusive) to `end_time` (exclusive), ISO 8601. */
export const timeWindow = {
  start_time: Joi.date().iso().description('Inclusive, ISO 8601'),
  end_time: Joi.date().iso().description('Exclusive, ISO 8601'),
};

/** Timestamps as they appear in responses. */
export const timestamp = Joi.string().isoDate();

/**
 * A URL of an update body that a client may send back as it read it, its
 * credentials shown as "[redacted]" (core/security/redact.ts): checked as `uri`
 * with the marker read as plain text; the service then decides whether it
 * stands for the stored URL.
 */
export function sentBackUri(uri: Joi.StringSchema): Joi.StringSchema {
  // One string schema (not alternatives), so the OpenAPI document, and the console's client
  // generated from it, show a plain string.
  return Joi.string().custom((value: string, helpers) => {
    const detail = uri.validate(value.replaceAll('[redacted]', 'redacted')).error?.details[0];
    return detail ? helpers.error(detail.type, detail.context) : value;
  });
}
