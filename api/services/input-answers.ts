/**
 * A person's answer to an MCP server's question, checked against the schema
 * the server sent: what is left out takes the schema's defaults (as MCP
 * clients apply them), then the answer must validate.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { ValidationError } from '../../core/errors.js';

/** A fresh compiler per answer: answers are rare, and a shared one would keep every server's schema. */
const compiler = () =>
  new Ajv2020({ allErrors: true, strict: false, useDefaults: true, validateFormats: false });

/** The answer with defaults applied; 400 naming `content.<field>` when it does not fit the schema. */
export function checkedAnswer(
  requestedSchema: Record<string, unknown> | undefined,
  content: Record<string, unknown>,
): Record<string, unknown> {
  if (!requestedSchema) return content;
  const answer = structuredClone(content);
  let validate;
  try {
    validate = compiler().compile(requestedSchema);
  } catch {
    // The server's schema is its own affair: an answer we cannot check goes as given.
    return answer;
  }
  if (validate(answer)) return answer;
  const errors = (validate.errors ?? []).map((e) => {
    const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
    const missing = (e.params as { missingProperty?: string }).missingProperty;
    const field = ['content', path, missing].filter(Boolean).join('.');
    return { field, message: `${field} ${e.message ?? 'is invalid'}`, type: `schema.${e.keyword}` };
  });
  throw new ValidationError(errors);
}
