import { GatewayError, invalidField } from '../../errors.js';
import { openaiErrorBody } from '../openai/errors.js';

/**
 * Thrown when a response id (in the path, or as `previous_response_id`)
 * names no response this key can see: never stored, stored by another key,
 * deleted or expired. A 404 whatever the reason, so ids of other keys'
 * responses cannot be probed.
 */
export class ResponseNotFoundError extends GatewayError {
  constructor(
    id: string,
    /** The request field that named it (`previous_response_id`); none for an id in the path. */
    param?: string,
  ) {
    const label = JSON.stringify(id.length > 80 ? `${id.slice(0, 80)}…` : id);
    super(
      404,
      'not_found',
      `${param ? 'Previous response' : 'Response'} with id ${label} not found.`,
      undefined,
      param,
    );
    this.name = 'ResponseNotFoundError';
  }
}

/**
 * OpenAI's error shape; a missing response has OpenAI's codes for it rather
 * than `unknown_url` (which is for paths that do not exist).
 */
export function responsesErrorBody(err: GatewayError): unknown {
  const body = openaiErrorBody(err) as { error: Record<string, unknown> };
  if (err instanceof ResponseNotFoundError)
    body.error.code = err.param === 'previous_response_id' ? 'previous_response_not_found' : null;
  return body;
}

/** A 400 for something this gateway does not offer, naming the field (and what to do instead). */
export const notSupported = (param: string, what: string, hint?: string): GatewayError =>
  invalidField(param, `${what} (${param}) is not supported by this gateway${hint ? `; ${hint}` : ''}.`);
