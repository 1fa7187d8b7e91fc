import type Joi from 'joi';
import type { Context, Next } from 'koa';
import { ValidationError, type FieldError } from '../../core/errors.js';
import { findUnstorable } from '../http/input-guard.js';

export interface RequestSchemas {
  params?: Joi.ObjectSchema;
  query?: Joi.ObjectSchema;
  body?: Joi.Schema;
}

export interface Validated<P = Record<string, string | undefined>, Q = Record<string, unknown>, B = unknown> {
  params: P;
  query: Q;
  body: B;
}

function toFields(error: Joi.ValidationError, location: string): FieldError[] {
  return error.details.map((d) => ({
    field: d.path.length > 0 ? d.path.join('.') : location,
    message: d.message,
    type: d.type,
  }));
}

/**
 * Validates params, query and body with joi (all problems reported, unknown keys
 * rejected) and puts the converted values on `ctx.state.input`. Query and path
 * values are strings on the wire, so they are converted; JSON bodies are not.
 *
 * Before joi sees anything, every location that has a schema is checked for
 * what no schema should have to repeat (input-guard.ts): strings, free-form
 * JSON included, with a NUL or a lone surrogate (Postgres cannot store them),
 * and JSON nested past MAX_JSON_DEPTH (joi and JSON.stringify recurse, and
 * overflow the stack a few thousand levels down). Those are a 400 naming the
 * field, and joi does not run.
 */
export function validate(schemas: RequestSchemas) {
  return async function validateMiddleware(ctx: Context, next: Next): Promise<void> {
    const rawBody = (ctx.request as { body?: unknown }).body;
    const unsafe = [
      ...(schemas.params ? findUnstorable(ctx.params ?? {}, 'params') : []),
      ...(schemas.query ? findUnstorable(ctx.query, 'query') : []),
      ...(schemas.body && rawBody !== undefined ? findUnstorable(rawBody, 'body') : []),
    ];
    if (unsafe.length > 0) throw new ValidationError(unsafe);

    const fields: FieldError[] = [];
    const input: Validated = { params: {}, query: {}, body: undefined };
    const run = (
      schema: Joi.Schema | undefined,
      value: unknown,
      location: keyof Validated,
      convert: boolean,
    ) => {
      if (!schema) return value;
      const result = schema.validate(value, {
        abortEarly: false,
        allowUnknown: false,
        convert,
        errors: { wrap: { label: false } },
      });
      if (result.error) fields.push(...toFields(result.error, location));
      return result.value as unknown;
    };
    input.params = run(schemas.params, ctx.params ?? {}, 'params', true) as Record<string, string>;
    input.query = run(schemas.query, { ...ctx.query }, 'query', true) as Record<string, unknown>;
    input.body = run(schemas.body, rawBody === undefined ? {} : rawBody, 'body', false);
    if (fields.length > 0) throw new ValidationError(fields);
    ctx.state.input = input;
    await next();
  };
}
