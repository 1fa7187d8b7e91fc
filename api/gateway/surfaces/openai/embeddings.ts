import { UnsupportedFeatureError } from '../../../../core/llm/errors.js';
import type { EmbeddingRequest, EmbeddingResponse, ProviderFormat } from '../../../../core/llm/types.js';
import { invalidRequest } from '../../errors.js';

export function parseOpenAiEmbedding(
  body: Record<string, unknown>,
  model: string,
  target: ProviderFormat,
): EmbeddingRequest {
  for (const key of Object.keys(body)) {
    if (!['model', 'input', 'dimensions', 'encoding_format', 'user'].includes(key))
      throw new UnsupportedFeatureError(key, target);
  }
  const input = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(input) || input.length === 0)
    throw invalidRequest("'input' must be a string or a non-empty array");
  if (!input.every((s) => typeof s === 'string'))
    throw new UnsupportedFeatureError('token-array input', target);
  return { model, input, dimensions: body.dimensions as number | undefined };
}

/** The official SDK asks for base64 by default: little-endian float32, as OpenAI sends it. */
const base64 = (v: number[]) => Buffer.from(new Float32Array(v).buffer).toString('base64');

export function renderOpenAiEmbedding(res: EmbeddingResponse, body: Record<string, unknown>): unknown {
  const asBase64 = body.encoding_format === 'base64';
  return {
    object: 'list',
    model: res.model,
    data: res.embeddings.map((e, index) => ({
      object: 'embedding',
      index,
      embedding: asBase64 ? base64(e) : e,
    })),
    usage: { prompt_tokens: res.usage.input_tokens, total_tokens: res.usage.input_tokens },
  };
}
