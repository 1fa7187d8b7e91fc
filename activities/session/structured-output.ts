import { Ajv2020 } from 'ajv/dist/2020.js';

/** Checks an answer against the agent's JSON schema: the parsed value, or what is wrong with it. */
export function validateStructured(
  schema: Record<string, unknown>,
  text: string,
): { ok: true; value: unknown } | { ok: false; errors: string[] } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, errors: ['the answer is not valid JSON'] };
  }
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true, logger: false });
  const validate = ajv.compile(schema);
  if (validate(value)) return { ok: true, value };
  return {
    ok: false,
    errors: (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`),
  };
}
