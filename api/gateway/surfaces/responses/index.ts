import { findUnstorable } from '../../../http/input-guard.js';
import { invalidField } from '../../errors.js';
import type { GatewayKey } from '../../../../core/security/virtual-keys.js';
import type { ResponsesStore } from '../../responses/store.js';
import type { ScopedRequest, StreamRenderer, Surface } from '../../surface.js';
import type { Obj } from '../json.js';
import { ResponseNotFoundError, responsesErrorBody } from './errors.js';
import { newResponseId, type Item } from './items.js';
import { answerOf, responseObject, type Answer, type ResponseShell } from './render.js';
import { parseResponsesRequest, type ResponsesRequest } from './request.js';
import { createResponsesStreamRenderer } from './stream.js';
import { toLlmRequest } from './translate.js';

/** Refuses what PostgreSQL cannot store as sent (a NUL, a lone surrogate), before the call is paid for. */
function checkStorable(body: Obj): void {
  const [problem] = findUnstorable(body, 'body');
  if (!problem) return;
  // In OpenAI's style: input[0].content rather than input.0.content.
  const field = problem.field.replace(/\.(\d+)(?=\.|$)/g, '[$1]');
  throw invalidField(
    field,
    `Invalid '${field}': ${problem.message.slice(problem.field.length).trim()}, which a stored response ` +
      'cannot hold (send store: false not to store it).',
  );
}

/**
 * One Responses API request: its id, its checked request and whole
 * conversation, and the answer once rendered (to store it).
 */
class ResponsesTurn {
  readonly shell: ResponseShell;
  private answer: Answer | undefined;
  private renderer: StreamRenderer | undefined;

  constructor(
    private readonly request: ResponsesRequest,
    private readonly items: Item[],
    private readonly askedModel: string,
    private readonly keyId: string,
    private readonly store: ResponsesStore,
  ) {
    this.shell = { id: newResponseId(), created_at: Math.floor(Date.now() / 1000), request };
  }

  readonly surface: Surface = {
    format: 'openai',
    alwaysTranslate: true,
    errorBody: responsesErrorBody,
    parseRequest: (_body, model, target) => toLlmRequest(this.request, this.items, model, target),
    renderResponse: (res) => {
      this.answer = answerOf(res);
      return responseObject(this.shell, this.answer);
    },
    // One renderer per request: the pipeline asks again for the error event of a broken
    // stream, which must continue this stream's sequence numbers and response.
    createStreamRenderer: () =>
      (this.renderer ??= createResponsesStreamRenderer(
        this.shell,
        this.askedModel,
        (a) => (this.answer = a),
      )),
  };

  /** The row: the conversation as answered and the response object's other fields. */
  persist(): Promise<void> {
    const answer = this.answer;
    if (!this.request.store || !answer) return Promise.resolve();
    const { id, created_at, status, model, output, usage, ...rest } = responseObject(this.shell, answer);
    return this.store.save({
      id: id as string,
      virtual_key_id: this.keyId,
      model: model as string,
      status: status as string,
      input_items: this.items,
      output_items: output as unknown[],
      usage: usage as Record<string, unknown> | null,
      response: rest,
      created_at: new Date((created_at as number) * 1000),
    });
  }
}

/**
 * The Responses API (`POST /v1/responses`) on the OpenAI surface. It keeps
 * state per request (`begin`): the earlier turns of `previous_response_id`
 * are read from the store, and the answer is stored with the usage row.
 * Every provider type gets it translated (an OpenAI provider as Chat
 * Completions, which every OpenAI-compatible server speaks).
 */
export function responsesSurface(store: ResponsesStore): Surface {
  const unscoped = (): never => {
    throw new Error('the Responses surface renders per request: call begin() first');
  };
  return {
    format: 'openai',
    alwaysTranslate: true,
    errorBody: responsesErrorBody,
    async begin(key: GatewayKey, body: Obj): Promise<ScopedRequest> {
      const request = parseResponsesRequest(body);
      if (request.store) checkStorable(body);
      let items = request.input;
      const previous = request.previous_response_id;
      if (previous !== null) {
        const earlier = await store.conversation(previous, key.id);
        if (!earlier) throw new ResponseNotFoundError(previous, 'previous_response_id');
        items = [...(earlier as Item[]), ...items];
      }
      if (items.length === 0) throw invalidField('input', "Missing required parameter: 'input'.");
      const turn = new ResponsesTurn(
        request,
        items,
        typeof body.model === 'string' ? body.model : '',
        key.id,
        store,
      );
      // Admission estimates the prompt from the whole conversation, as the provider will get it.
      return { surface: turn.surface, body: { ...body, input: items }, persist: () => turn.persist() };
    },
    parseRequest: unscoped,
    renderResponse: unscoped,
    createStreamRenderer: unscoped,
  };
}
